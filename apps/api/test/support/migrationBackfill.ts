import { readFileSync } from 'node:fs';
import type { Database } from '@chat/db';
import { sql } from 'drizzle-orm';

/**
 * The hand-written backfill of a migration (from its `DO $backfill$` block on), run again as it
 * runs on a database with old threads.
 */
export async function runMigrationBackfill(db: Database, migration: URL): Promise<void> {
  const text = readFileSync(migration, 'utf8');
  const at = text.indexOf('DO $backfill$');
  if (at < 0) throw new Error(`no backfill in ${migration.pathname}`);
  await db.execute(sql.raw(text.slice(at)));
}
