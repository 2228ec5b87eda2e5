import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestDatabase } from '@chat/db/testing';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, readUntilWords, textOfMessage, waitFor } from './support/client';
import { childrenOf, commandLineOf, processesMentioning } from './support/processTable';
import { freshDatabase } from './support/testApi';

/** The API processes the supervisor `pid` runs (its Node children; PostgreSQL is the other kind). */
const apiProcessesOf = (pid: number) =>
  childrenOf(pid).filter((child) => /main\.(ts|mjs)/.test(commandLineOf(child)));

/** The process a turn ran on: its runner id is `api-<pid>-<random>`. */
async function runnerPidOf(sql: postgres.Sql, turnId: string): Promise<number> {
  const [row] = await sql<{ runner_id: string | null }[]>`
    select runner_id from chat_turn_requests where id = ${turnId}`;
  return Number(row?.runner_id?.split('-')[1]);
}

describe('several API processes on one port (L2)', () => {
  let database: TestDatabase;
  let api: ApiProcess;
  let client: ApiClient;
  let sql: postgres.Sql;

  beforeAll(async () => {
    database = await freshDatabase();
    api = await startApiProcess(
      {
        DATABASE_URL: database.url,
        API_PROCESSES: '2',
        TURN_LEASE_MS: '1500',
        LOCAL_MODEL_DELAY_MS: '25',
        LOG_LEVEL: 'info',
      },
      // Three processes compile the sources at once: on a busy machine that takes a while.
      { startTimeoutMs: 240_000, captureOutput: true },
    );
    // The port answers as soon as the first process listens; the test wants both, which the
    // supervisor says once each of them listens.
    await waitFor(
      async () => api.output.some((line) => line.includes('"processes":2') && line.includes('api listening')),
      (listening) => listening,
      240_000,
    );
    client = await ApiClient.signIn(api.baseUrl);
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
  }, 360_000);

  afterAll(async () => {
    await api?.stop();
    await sql?.end();
    await database?.drop();
  }, 60_000);

  it('deals the port to both processes and holds a rule across them: racing sends on one chat start one (Q5)', async () => {
    // Sends at once, each on a connection of its own: the port's connections go to both processes.
    // The children take connections from the port themselves, so which one takes a given
    // connection is the kernel's doing: rounds of sends until both have run some (a few at most).
    const ranOn = new Set<number>();
    for (let round = 0; round < 10 && ranOn.size < 2; round++) {
      const threads = await Promise.all(Array.from({ length: 12 }, () => client.createThread()));
      const replies = await Promise.all(
        threads.map((threadId) => client.sendAndRead(threadId, 'hi [[words:3]]')),
      );
      for (const reply of replies) ranOn.add(await runnerPidOf(sql, reply.turnId));
      // The next round on new connections: this client drops an idle one after 4 s.
      if (ranOn.size < 2) await new Promise((resolve) => setTimeout(resolve, 4_500));
    }
    expect([...ranOn].sort()).toEqual(apiProcessesOf(api.child.pid as number).sort());

    for (let round = 0; round < 3; round++) {
      const threadId = await client.createThread();
      const raced = await Promise.all([
        client.send(threadId, 'a [[words:300]] [[delay:20]]'),
        client.send(threadId, 'b [[words:300]] [[delay:20]]'),
      ]);
      expect(raced.map((response) => response.status).sort()).toEqual([200, 202]);
      await client.json('POST', `/api/threads/${threadId}/interrupt`);
      for (const response of raced) await response.body?.cancel();
    }
  }, 120_000);

  it('replaces a process killed mid-reply, and loses nothing it had accepted', async () => {
    const supervisor = api.child.pid as number;
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'a long story [[words:2000]]');
    expect(reply.status).toBe(200);
    const turnId = reply.headers.get('x-turn-id') ?? '';
    await readUntilWords(reply, 40);
    const queued = await client.queued(threadId, 'after the crash [[words:12]]');
    const victim = await runnerPidOf(sql, turnId);
    expect(apiProcessesOf(supervisor)).toContain(victim);

    process.kill(victim, 'SIGKILL');
    await reply.body?.cancel().catch(() => {});

    const replaced = await waitFor(
      async () => apiProcessesOf(supervisor),
      (pids) => pids.length === 2 && !pids.includes(victim),
      60_000,
    );
    expect(replaced).not.toContain(victim);
    // The other process's sweeper settles the orphan once its lease runs out: the partial reply is
    // kept, and the queued message waits at the head (S2).
    const detail = await waitFor(
      () => client.detail(threadId),
      (d) => d.turnQueue.activeTurn === null,
      30_000,
    );
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual([[queued.id, 'queued']]);
    expect(detail.messages[1]?.metadata.interrupted).toBe(true);
    expect(textOfMessage(detail.messages[1]).length).toBeGreaterThan(0);
    // And it runs when claimed, on whichever process answers.
    const claimed = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.status).toBe(200);
    await claimed.body?.cancel();
    const after = await waitFor(
      () => client.detail(threadId),
      (d) => d.turnQueue.activeTurn === null && d.messages.length === 4,
      30_000,
    );
    expect(textOfMessage(after.messages[2])).toBe('after the crash [[words:12]]');
    expect(textOfMessage(after.messages[3]).split(/\s+/)).toHaveLength(12);
  }, 180_000);
});

describe('the supervisor on its embedded PostgreSQL (L2)', () => {
  it('starts the database once, and on SIGTERM ends every process and frees the port within the bound', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'chat-processes-'));
    // The embedded server runs as its own user, which must reach the directory.
    chmodSync(dataDir, 0o755);
    try {
      const api = await startApiProcess(
        { DATABASE_URL: '', DATA_DIR: dataDir, API_PROCESSES: '2', LOG_LEVEL: 'info' },
        { startTimeoutMs: 240_000, captureOutput: true },
      );
      const supervisor = api.child.pid as number;
      await waitFor(
        async () =>
          api.output.some((line) => line.includes('"processes":2') && line.includes('api listening')),
        (listening) => listening,
        240_000,
      );
      // One PostgreSQL, the supervisor's child, for both API processes.
      const servers = childrenOf(supervisor).filter((child) =>
        commandLineOf(child).includes(join(dataDir, 'postgres')),
      );
      expect(servers).toHaveLength(1);
      const client = await ApiClient.signIn(api.baseUrl);
      const threadId = await client.createThread();
      expect((await client.sendAndRead(threadId, 'hello [[words:3]]')).chunks.length).toBeGreaterThan(0);
      // The children were given its URL: they reach it through its Unix socket (ADR-052), so each
      // session of theirs is `[local]`, none from 127.0.0.1.
      const sessions = childrenOf(servers[0] as number)
        .map(commandLineOf)
        .filter((line) => line.includes(' chat '));
      expect(sessions.length).toBeGreaterThan(0);
      expect(sessions.filter((line) => !line.includes('[local]'))).toEqual([]);

      const stoppedAt = Date.now();
      await api.stop();
      // The bound is 10 s; the rest is slack for a busy machine (what matters: it ends, never hangs).
      expect(Date.now() - stoppedAt).toBeLessThan(30_000);
      await waitFor(
        async () => processesMentioning(dataDir).length,
        (count) => count === 0,
        10_000,
      );
      const port = Number(new URL(api.baseUrl).port);
      await new Promise<void>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 420_000);
});
