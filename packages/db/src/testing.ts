import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { ensureDatabase } from './connect';
import { startEmbeddedPostgres } from './embedded';
import { runMigrations } from './migrate';

/**
 * Test support: one PostgreSQL server per test run (`DATABASE_URL`'s server, or an embedded one in
 * a temporary directory), and a fresh database per test file so files run in parallel.
 */
export async function startTestServer(): Promise<{ adminUrl: string; stop(): Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '/postgres';
    return { adminUrl: url.toString(), stop: async () => {} };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-test-pg-'));
  const server = await startEmbeddedPostgres({ dataDir, persistent: false });
  return {
    adminUrl: server.adminUrl,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new, migrated database on the test server. */
export async function createTestDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `test_${randomUUID().replaceAll('-', '')}`;
  const url = await ensureDatabase(adminUrl, name);
  await runMigrations(url);
  return {
    url,
    drop: async () => {
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}
