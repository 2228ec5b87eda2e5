import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema';

export type Database = ReturnType<typeof createDatabase>;
export type Sql = postgres.Sql;

export function createSql(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, { max: options.max ?? 10, onnotice: () => {} });
}

export function createDatabase(sql: Sql) {
  return drizzle(sql, { schema });
}

/** Any transaction or the database itself: named queries take either. */
export type Queryable = Database | Parameters<Parameters<Database['transaction']>[0]>[0];
