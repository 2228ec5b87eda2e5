import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema';

export type Database = ReturnType<typeof createDatabase>;
export type Sql = postgres.Sql;

/**
 * Seconds to wait for a connection. postgres.js waits 30 by default; while the database is down a
 * request should fail fast (`503 unavailable`) rather than hang.
 */
export const CONNECT_TIMEOUT_S = 3;

export function createSql(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, { max: options.max ?? 10, connect_timeout: CONNECT_TIMEOUT_S, onnotice: () => {} });
}

export function createDatabase(sql: Sql) {
  return drizzle(sql, { schema });
}

/** Any transaction or the database itself: named queries take either. */
export type Queryable = Database | Parameters<Parameters<Database['transaction']>[0]>[0];
