import { type ErrorBody, refusalMessages, type ThreadDetail } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import {
  ApiClient,
  iterateChunks,
  readChunks,
  readChunksUntil,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { OwnedPostgres } from './support/faults/ownedPostgres';

/**
 * F4: an answer says what happened. A Stop & send that stopped the reply and then lost the
 * database for longer than the interrupt waits cannot start the head; its answer must say that
 * the reply stopped and the message waits first in the queue, paused (as after a Stop, S3), and
 * the thread must be in exactly that state once the database is back, with nothing lost.
 */
let server: OwnedPostgres | undefined;
let api: ApiProcess | undefined;

beforeAll(async () => {
  server = await OwnedPostgres.start();
  api = await startApiProcess(
    { DATABASE_URL: server.databaseUrl, LOCAL_MODEL_DELAY_MS: '20' },
    { captureOutput: true },
  );
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await server?.dispose();
});

describe('Stop & send when the database goes away as it stops the reply (F4)', () => {
  it('answers that the reply stopped and the message waits, paused; once the database is back the thread is so, nothing is lost, and Send now runs it', async () => {
    if (!api || !server) throw new Error('not started');
    const postgres = server;
    const client = await ApiClient.signIn(api.baseUrl);
    const threadId = await client.createThread('Stop & send through an outage');
    const running = await client.send(threadId, 'a long reply [[words:3000]]');
    expect(running.status).toBe(200);
    const replyTurnId = running.headers.get('x-turn-id') ?? '';
    const head = await client.queued(threadId, 'the priority now [[words:5]]');
    // Some words are out, so there is a partial reply to keep.
    const reply = iterateChunks(running);
    let words = 0;
    await readChunksUntil(reply, (chunk) => chunk.type === 'text-delta' && ++words >= 10);
    void (async () => {
      for await (const _ of reply);
    })().catch(() => {});

    // Storing the stopped reply meets a lock of the test's own (on the transcript's messages, which
    // nothing else writes while the reply streams), so the database can be taken away after the
    // Stop & send has stopped the reply and before it could claim the head.
    let releaseLock = () => {};
    const lockHeld = new Promise<void>((resolve) => {
      void postgres
        .query((sql) =>
          sql.begin(async (tx) => {
            await tx`lock table mastra.mastra_messages in exclusive mode`;
            resolve();
            await new Promise<void>((release) => {
              releaseLock = release;
            });
          }),
        )
        .catch(() => {});
    });
    await lockHeld;
    expect(await replyStoreWaiters(postgres)).toBe(0);
    const answered = client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    answered.catch(() => {});
    // The stop reached the reply: it ended, and its runner is storing it, held by the lock.
    await waitFor(
      () => replyStoreWaiters(postgres),
      (count) => count > 0,
      30_000,
    );
    await postgres.stop();
    releaseLock();
    // The database stays away for longer than the interrupt's wait (15 s): the answer comes first.
    const answer = await answered;
    const body = (await answer.json()) as ErrorBody;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).not.toBeNull();
    expect(body.error).toEqual({
      code: 'unavailable',
      message: refusalMessages.unavailable.stoppedNotSent,
      replyStopped: true,
      queuePaused: true,
    });

    await postgres.resume();
    // The thread is as the answer said: the reply stopped (its partial text kept, marked
    // interrupted), the message waits first in the queue, which is paused; nothing ran meanwhile.
    const detail = await waitFor(
      async () => {
        const response = await client.fetch('GET', `/api/threads/${threadId}`);
        return response.status === 200 ? ((await response.json()) as ThreadDetail) : undefined;
      },
      (read) => read?.turnQueue.activeTurn === null,
      60_000,
    );
    if (!detail) throw new Error('no detail');
    expect(detail.turnQueue.paused).toBe(true);
    expect(detail.turnQueue.items.map((item) => [item.id, item.status, item.text])).toEqual([
      [head.id, 'queued', 'the priority now [[words:5]]'],
    ]);
    const [user, assistant, ...rest] = detail.messages;
    expect(rest).toEqual([]);
    expect(textOfMessage(user)).toBe('a long reply [[words:3000]]');
    expect(assistant?.metadata.interrupted).toBe(true);
    expect(textOfMessage(assistant).trim().split(/\s+/).length).toBeGreaterThanOrEqual(10);
    const [row] = await postgres.query(
      (sql) => sql<{ status: string }[]>`select status from chat_turn_requests where id = ${replyTurnId}`,
    );
    expect(row?.status).toBe('interrupted');

    // Send now is the way on: the head runs, with the handoff (the reply before it was cut, S5).
    // Just after an outage a busy server may still answer 503 with Retry-After (its circuit
    // closing, or its event loop catching up, L1): sent again after that wait, as the web app does.
    let sent = await client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    for (let tries = 0; sent.status === 503 && tries < 10; tries++) {
      await sent.body?.cancel();
      await new Promise((resolve) =>
        setTimeout(resolve, Number(sent.headers.get('retry-after') ?? 1) * 1000),
      );
      sent = await client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    }
    expect(sent.status).toBe(200);
    expect(sent.headers.get('x-turn-id')).toBe(head.id);
    expect(textOfChunks(await readChunks(sent))).toMatch(/^\(after interruption\)/);
    const after = await client.detail(threadId);
    expect(after.turnQueue).toMatchObject({ activeTurn: null, items: [], paused: false });
  }, 180_000);
});

/** Sessions waiting on the test's lock while writing the transcript's messages. */
async function replyStoreWaiters(postgres: OwnedPostgres): Promise<number> {
  const [row] = await postgres.query(
    (sql) => sql<{ count: number }[]>`
      select count(*)::int as count from pg_stat_activity
      where wait_event_type = 'Lock' and pid <> pg_backend_pid() and query ilike '%mastra_messages%'`,
  );
  return row?.count ?? 0;
}
