import { schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, readUntilWords, textOfChunks, waitFor } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const HANDOFF = '(after interruption)';

/** A thread whose running reply was stopped with a plain Stop (no Stop & send). */
async function stoppedThread(queue: string[] = []) {
  const threadId = await client.createThread();
  const reply = await client.send(threadId, 'tell me everything [[words:400]] [[delay:25]]');
  await readUntilWords(reply, 4);
  const queued = [];
  for (const text of queue) queued.push(await client.queued(threadId, text));
  const stop = await client.json<{ turn: { status: string } }>('POST', `/api/threads/${threadId}/interrupt`);
  expect(stop.body.turn.status).toBe('interrupted');
  await reply.body?.cancel();
  return { threadId, queued };
}

/** Resume: a plain Stop with items waiting paused the queue (S3). */
async function resume(threadId: string): Promise<void> {
  const resumed = await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
  expect(resumed.status).toBe(200);
}

async function replyOf(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  return textOfChunks(await readChunks(response));
}

async function handoffRows(threadId: string) {
  const rows = await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
  return rows.filter((row) => row.handoff).map((row) => row.id);
}

describe('the handoff follows every interrupt (S5)', () => {
  it('plain Stop, then Send now on the head: it opens with the handoff; the turn after is ordinary', async () => {
    const { threadId, queued } = await stoppedThread(['short please [[words:8]]', 'and then? [[words:6]]']);
    const [head, second] = queued;
    const sent = await client.fetch('POST', `/api/threads/${threadId}/queue/${head?.id}/send-now`);
    expect((await replyOf(sent)).startsWith(`${HANDOFF} You said: "short please".`)).toBe(true);
    const next = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(next.headers.get('x-turn-id')).toBe(second?.id);
    expect(await replyOf(next)).toMatch(/^You said: "and then\?"\./);
    expect(await handoffRows(threadId)).toEqual([head?.id]);
  });

  it("plain Stop, Resume, then a viewer's claim: it opens with the handoff; the turn after is ordinary", async () => {
    const { threadId, queued } = await stoppedThread(['claimed [[words:6]]']);
    await resume(threadId);
    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.headers.get('x-turn-id')).toBe(queued[0]?.id);
    expect((await replyOf(claim)).startsWith(`${HANDOFF} You said: "claimed".`)).toBe(true);
    const { chunks } = await client.sendAndRead(threadId, 'plain [[words:6]]');
    expect(textOfChunks(chunks)).toMatch(/^You said: "plain"\./);
  });

  it('plain Stop, then a new send to the idle thread: it opens with the handoff; the turn after is ordinary', async () => {
    const { threadId } = await stoppedThread();
    const first = await client.sendAndRead(threadId, 'new question [[words:8]]');
    expect(textOfChunks(first.chunks).startsWith(`${HANDOFF} You said: "new question".`)).toBe(true);
    const second = await client.sendAndRead(threadId, 'another [[words:6]]');
    expect(textOfChunks(second.chunks)).toMatch(/^You said: "another"\./);
    expect(await handoffRows(threadId)).toEqual([first.turnId]);
  });

  it('gives exactly one handoff turn when two tabs race to claim after a Stop', async () => {
    const { threadId, queued } = await stoppedThread(['one [[words:6]]', 'two [[words:6]]']);
    await resume(threadId);
    const claims = await Promise.all([
      client.fetch('POST', `/api/threads/${threadId}/queue/claim`),
      client.fetch('POST', `/api/threads/${threadId}/queue/claim`),
      client.fetch('POST', `/api/threads/${threadId}/queue/${queued[0]?.id}/send-now`),
    ]);
    expect(claims.map((claim) => claim.status).sort()).toEqual([200, 409, 409]);
    const winner = claims.find((claim) => claim.status === 200) as Response;
    expect(winner.headers.get('x-turn-id')).toBe(queued[0]?.id);
    const reply = await replyOf(winner);
    // Shown when it fails: what the winner's stream said instead.
    expect(reply.slice(0, 200)).toMatch(
      new RegExp(`^${HANDOFF.replace(/[()]/g, '\\$&')} You said: "one"\\.`),
    );
    for (const claim of claims) if (claim !== winner) await claim.body?.cancel();

    // The winner's stream has ended; its turn settles just after (a claim before that is a 409).
    await waitFor(
      () => client.turnQueue(threadId),
      (queue) => queue.activeTurn === null,
      30_000,
    );
    const next = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(await replyOf(next)).toMatch(/^You said: "two"\./);
    expect(await handoffRows(threadId)).toEqual([queued[0]?.id]);
  });

  it('stops nothing when the message of a Stop & send left the queue while it waited for the thread (S4)', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'tell me everything [[words:400]] [[delay:25]]');
    await readUntilWords(reply, 4);
    const doomed = await client.queued(threadId, 'one [[words:6]]');
    await client.queued(threadId, 'two [[words:6]]');
    const db = api.runtime.database.db;
    /** Requests waiting for a lock: the thread's, held below. */
    const lockWaiters = async () => {
      const [row] = await db.execute<{ count: number }>(sql`
        select count(*)::int as count from pg_stat_activity
        where wait_event_type = 'Lock' and datname = current_database()`);
      return row?.count ?? 0;
    };
    // Another tab deletes the item while this tab's Stop & send of it is on its way: the delete
    // takes the thread first, after the Stop & send read the queue without it. Held by the
    // thread's lock, so the interleaving is the same on every run, whatever the machine's pace.
    const { deleting, sending } = await db.transaction(async (tx) => {
      await tx.execute(sql`select id from threads where id = ${threadId} for update`);
      const deleting = client.json('DELETE', `/api/threads/${threadId}/queue/${doomed.id}`);
      await waitFor(lockWaiters, (count) => count >= 1, 20_000);
      const sending = client.json<{ error: { code: string } }>(
        'POST',
        `/api/threads/${threadId}/queue/${doomed.id}/send-now`,
      );
      await waitFor(lockWaiters, (count) => count >= 2, 20_000);
      return { deleting, sending };
    });
    expect((await deleting).status).toBe(200);
    const refused = await sending;
    expect([refused.status, refused.body.error.code]).toEqual([409, 'not_queued']);
    // Nothing changed by the refusal: the reply goes on, and the queue is not paused.
    const queue = await client.turnQueue(threadId);
    expect(queue.activeTurn?.status).toBe('running');
    expect(queue.paused).toBe(false);
    expect(queue.items.map((item) => item.text)).toEqual(['two [[words:6]]']);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await reply.body?.cancel();
  });

  it('gives no handoff once the interrupted reply was deleted from the version (B4)', async () => {
    const { threadId } = await stoppedThread();
    const detail = await client.detail(threadId);
    const [message] = detail.messages;
    const deleted = await client.json('DELETE', `/api/threads/${threadId}/messages/${message?.id}`);
    expect(deleted.status).toBe(200);
    const { chunks } = await client.sendAndRead(threadId, 'fresh start [[words:6]]');
    expect(textOfChunks(chunks)).toMatch(/^You said: "fresh start"\./);
  });
});
