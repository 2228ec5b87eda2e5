import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { withStartupLock } from './startupLock';

const migrationsFolder = fileURLToPath(new URL('../drizzle', import.meta.url));

/** Applies the checked-in drizzle-kit migrations that have not run yet. */
export async function runMigrations(url: string): Promise<void> {
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  try {
    await withStartupLock(sql, () => migrate(drizzle(sql), { migrationsFolder }));
  } finally {
    await sql.end();
  }
}
