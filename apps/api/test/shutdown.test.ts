import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedServer, freePort, startEmbeddedPostgres } from '@chat/db';
import { afterAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, waitFor } from './support/client';

/** An API that runs its own embedded PostgreSQL, in a data directory of this test's. */
const root = mkdtempSync(join(tmpdir(), 'chat-shutdown-'));
// Run as root, PostgreSQL runs as the `postgres` user, which must reach the data directory.
chmodSync(root, 0o755);
let api: ApiProcess | undefined;
let restarted: EmbeddedServer | undefined;

afterAll(async () => {
  if (api && api.child.exitCode === null && api.child.signalCode === null) await api.kill();
  await restarted?.stop();
  rmSync(root, { recursive: true, force: true });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The shutdown's own bound is 10 s; this one leaves room for a loaded CI machine. */
const SHUTDOWN_BOUND_MS = 12_000;

describe('shutting down', () => {
  it('finishes on its own within the bound after its database went away and came back', async () => {
    const port = await freePort();
    // No DATABASE_URL: the API starts (and owns) the embedded server.
    api = await startApiProcess({ DATABASE_URL: '', DATA_DIR: root, EMBEDDED_PG_PORT: String(port) });
    const client = await ApiClient.signIn(api.baseUrl);
    const threadId = await client.createThread('Before the outage');

    // The database stops under the API (an operator, a crash) and is started again by someone else:
    // the server the API started is gone, and its connections broke.
    const postmaster = Number(readFileSync(join(root, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(postmaster, 'SIGINT');
    await waitFor(
      async () => isAlive(postmaster),
      (alive) => !alive,
      30_000,
    );
    const during = await client.fetch('GET', `/api/threads/${threadId}`);
    expect(during.status).toBe(503);
    restarted = await startEmbeddedPostgres({
      dataDir: join(root, 'postgres'),
      port,
      passwordFile: join(root, 'postgres-password'),
    });
    await waitFor(
      async () => (await client.fetch('GET', `/api/threads/${threadId}`)).status,
      (status) => status === 200,
      30_000,
    );

    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      api?.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const startedAt = Date.now();
    api.child.kill('SIGTERM');
    const result = await exited;
    // A clean exit of its own (not a forced one: code 1, or 143 from a library's signal hook).
    expect(result).toEqual({ code: 0, signal: null });
    expect(Date.now() - startedAt).toBeLessThan(SHUTDOWN_BOUND_MS);
  }, 180_000);
});
