import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ThreadDetail } from '@chat/contracts';
import {
  type EmbeddedServer,
  ensureDatabase,
  freePort,
  runMigrations,
  startEmbeddedPostgres,
} from '@chat/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, readChunks, textOfChunks, waitFor } from './support/client';

/** A PostgreSQL server of this test's own, which it stops and starts again on the same port. */
const root = mkdtempSync(join(tmpdir(), 'chat-outage-'));
// Run as root, PostgreSQL runs as the `postgres` user, which must reach the data directory.
chmodSync(root, 0o755);
const place = { dataDir: join(root, 'postgres'), passwordFile: join(root, 'postgres-password') };
let port: number;
let server: EmbeddedServer | undefined;
let api: ApiProcess | undefined;

const startServer = async () => {
  server = await startEmbeddedPostgres({ ...place, port });
  return server;
};

beforeAll(async () => {
  port = await freePort();
  const started = await startServer();
  const databaseUrl = await ensureDatabase(started.adminUrl, 'chat');
  await runMigrations(databaseUrl);
  // A short lease: the orphan sweeper runs every 750 ms, so an outage meets it many times.
  api = await startApiProcess({
    DATABASE_URL: databaseUrl,
    TURN_LEASE_MS: '1500',
    LOCAL_MODEL_DELAY_MS: '20',
  });
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

interface Refusal {
  error: { code: string };
}

describe('a database outage', () => {
  it('answers 503 quickly while the database is down, stays up, and recovers by itself with nothing accepted lost', async () => {
    if (!api || !server) throw new Error('not started');
    const baseUrl = api.baseUrl;
    const client = await ApiClient.signIn(baseUrl);
    const threadId = await client.createThread('Through an outage');
    const running = await client.send(threadId, 'a long reply [[words:3000]]');
    expect(running.status).toBe(200);
    const queued = [
      await client.queued(threadId, 'queued before the outage 1 [[words:3]]'),
      await client.queued(threadId, 'queued before the outage 2 [[words:3]]'),
    ];
    void running.text().catch(() => {});

    await server.stop();

    // Requests fail fast with the contract's 503, not a hang or a 500.
    const startedAt = Date.now();
    const send = await client.json<Refusal>('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'during the outage',
    });
    expect(send.status).toBe(503);
    expect(send.body.error.code).toBe('unavailable');
    expect(send.headers.get('retry-after')).toBe('2');
    for (const path of ['/api/threads', `/api/threads/${threadId}`]) {
      const read = await client.json<Refusal>('GET', path);
      expect(read.status, path).toBe(503);
      expect(read.body.error.code).toBe('unavailable');
    }
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    const ready = await fetch(`${baseUrl}/api/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as Refusal).error.code).toBe('unavailable');
    expect((await fetch(`${baseUrl}/api/health`)).status).toBe(200);

    // Background work (the orphan sweeper every 750 ms, heartbeats, the signals check) meets the
    // outage for a while; the process stays up.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    expect(api.child.exitCode).toBeNull();
    expect(api.child.signalCode).toBeNull();
    expect((await fetch(`${baseUrl}/api/health`)).status).toBe(200);

    await startServer();

    await waitFor(
      async () => (await fetch(`${baseUrl}/api/ready`)).status,
      (status) => status === 200,
      30_000,
    );
    // The reply that was running went on once its heartbeat reached the database again; Stop
    // ends it, and both queued sends are still there.
    const stop = await client.json<{ turn: { status: string } | null }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(stop.status).toBe(200);
    const detail = await waitFor(
      () => client.detail(threadId),
      (d: ThreadDetail) => d.turnQueue.activeTurn === null,
      30_000,
    );
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual(
      queued.map((turn) => [turn.id, 'queued']),
    );
    // The Stop paused the queue (S3). Resumed, they run, one claim at a time, and a new send works.
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    for (const turn of queued) {
      const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
      expect(claim.status).toBe(200);
      expect(claim.headers.get('x-turn-id')).toBe(turn.id);
      await readChunks(claim);
    }
    const after = await client.sendAndRead(threadId, 'after the outage [[words:12]]');
    expect(textOfChunks(after.chunks)).toContain('after the outage');
    const final = await client.detail(threadId);
    const userTexts = final.messages
      .filter((message) => message.role === 'user')
      .map((message) => message.parts.map((part) => String(part.text ?? '')).join(''));
    expect(userTexts).toEqual([
      'a long reply [[words:3000]]',
      'queued before the outage 1 [[words:3]]',
      'queued before the outage 2 [[words:3]]',
      'after the outage [[words:12]]',
    ]);
  }, 150_000);
});
