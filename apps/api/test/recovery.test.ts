import { Writable } from 'node:stream';
import { serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { createLogger } from '../src/platform/logger';
import { createRuntime, type Runtime } from '../src/runtime';
import { ApiClient, textOfMessage, waitFor } from './support/client';
import { sleepUntil } from './support/faults/lab';
import { OwnedPostgres } from './support/faults/ownedPostgres';
import { StreamView } from './support/faults/streamView';
import { testConfig } from './support/testApi';

/**
 * Crash recovery after a database outage. While the database is away every runner's lease runs
 * out (nobody can renew one), the live ones included; once it is back, each live runner renews
 * within a third of a lease. The orphan sweeper must give them that time: it settles nothing
 * for one lease after the outage, so a reply still running is never cut back to the checkpoint
 * it had before the outage, while a turn whose server is really gone is still settled.
 */
const LEASE_MS = 2_000;

/** The API's log lines, parsed. */
const logged: Array<{ time: number; msg?: string; turnId?: string }> = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line));
    done();
  },
});

let postgres: OwnedPostgres;
let runtime: Runtime;
let baseUrl: string;
let closeServer: () => Promise<void>;

beforeAll(async () => {
  postgres = await OwnedPostgres.start();
  const config = testConfig(postgres.databaseUrl, {
    TURN_LEASE_MS: String(LEASE_MS),
    LOG_LEVEL: 'info',
  });
  runtime = await createRuntime(config, createLogger('info', capture));
  const server = serve(createApp(runtime.services), { port: 0, hostname: '127.0.0.1', silent: true });
  await server.ready();
  baseUrl = (server.url ?? '').replace(/\/$/, '');
  closeServer = () => server.close(true);
}, 120_000);

afterAll(async () => {
  await closeServer?.();
  await runtime?.close();
  await postgres?.dispose();
});

describe('the orphan sweeper after a database outage', () => {
  it('settles nothing for a lease after the database is back: a live reply ends whole, a dead server’s turn is settled after the grace', async () => {
    const client = await ApiClient.signIn(baseUrl);
    // A reply of this instance that outlives the outage.
    const liveThread = await client.createThread();
    const live = await client.send(liveThread, 'a long reply [[words:150]] [[delay:60]]');
    expect(live.status).toBe(200);
    const view = new StreamView(live.headers.get('x-turn-id') ?? '', live);
    await waitFor(
      async () => view.wordCount,
      (words) => words >= 20,
      30_000,
    );
    // A turn whose server is gone: running, its lease running out once the outage has begun.
    const deadThread = await client.createThread();
    const { thread } = await client.detail(deadThread);
    const orphanId = crypto.randomUUID();
    await postgres.query(
      (sql) => sql`
        insert into chat_turn_requests
          (id, thread_id, branch_id, client_request_id, text, status, runner_id, lease_expires_at,
           started_at, user_message_id, assistant_message_id, partial_text)
        values
          (${orphanId}, ${deadThread}, ${thread.activeBranchId}, ${crypto.randomUUID()},
           'a message its server never finished', 'running', 'api-gone',
           now() + ${`${LEASE_MS} milliseconds`}::interval, now(), ${crypto.randomUUID()},
           ${crypto.randomUUID()}, 'kept so far')`,
    );
    // Three leases: every lease here runs out while it lasts.
    await postgres.stop();
    await sleepUntil(Date.now() + 3 * LEASE_MS);
    await postgres.resume();

    await view.done;
    expect(view.finish).toEqual({ at: expect.any(Number), interrupted: false });
    const settled = await waitFor(
      () =>
        postgres.query(
          (sql) => sql<{ status: string }[]>`
        select status from chat_turn_requests where id = ${orphanId}`,
        ),
      ([row]) => row?.status === 'interrupted',
      60_000,
    );
    expect(settled).toEqual([{ status: 'interrupted' }]);

    // The sweeper reached the database again, then waited a lease before it settled the orphan.
    const back = logged.find((line) => line.msg === 'orphan sweeps work again');
    const orphanSettled = logged.find(
      (line) => line.msg === 'settled an orphaned turn' && line.turnId === orphanId,
    );
    expect(back).toBeDefined();
    expect((orphanSettled?.time ?? 0) - (back?.time ?? 0)).toBeGreaterThanOrEqual(LEASE_MS);
    // The live reply was never settled from its checkpoint: it ended completed, whole.
    expect(
      logged.filter((line) => line.msg === 'settled an orphaned turn').map((line) => line.turnId),
    ).toEqual([orphanId]);
    // Right after the outage the API may still answer 503 a moment (its circuit's next probe).
    const liveDetail = await waitFor(
      () => client.detail(liveThread).catch(() => undefined),
      (detail) => detail !== undefined && detail.turnQueue.activeTurn === null,
      30_000,
    );
    if (!liveDetail) throw new Error('no detail');
    expect(textOfMessage(liveDetail.messages[1]).replace(/\s+/g, ' ').trim()).toBe(
      view.textSeen().join('').replace(/\s+/g, ' ').trim(),
    );
    // The dead server's turn keeps what its checkpoint held, marked interrupted.
    const deadDetail = await client.detail(deadThread);
    expect(deadDetail.messages.map((message) => [message.role, textOfMessage(message)])).toEqual([
      ['user', 'a message its server never finished'],
      ['assistant', 'kept so far'],
    ]);
    expect(deadDetail.messages[1]?.metadata.interrupted).toBe(true);
  }, 180_000);
});
