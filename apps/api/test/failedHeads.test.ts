import {
  type ErrorBody,
  type ThreadDetail,
  type Turn,
  type TurnQueue,
  turnErrorMessages,
} from '@chat/contracts';
import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { readTurnQueue } from '../src/chats/turns/queue/turnQueue';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readUntilWords,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { type TestApi, turnRow, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const texts = (detail: ThreadDetail) => detail.messages.map((message) => textOfMessage(message));
const wordsOf = (text: string) => text.trim().split(/\s+/).length;

/**
 * A thread whose first exchange ("first") completed, and whose queue holds `head` and then
 * "later [[history]]". A viewer's claim runs the head; its reply is returned.
 */
async function claimedHead(head: string) {
  const threadId = await client.createThread();
  const running = await client.send(threadId, 'first [[words:12]] [[delay:40]]');
  const headTurn = await client.queued(threadId, head);
  const later = await client.queued(threadId, 'later [[history]] [[words:8]]');
  await readChunks(running);
  await waitFor(
    () => client.turnQueue(threadId),
    (queue) => queue.activeTurn === null,
  );
  const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
  expect(claim.status).toBe(200);
  expect(claim.headers.get('x-turn-id')).toBe(headTurn.id);
  return { threadId, head: headTurn, later, chunks: await readChunks(claim) };
}

async function claim(threadId: string) {
  return await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/claim`);
}

describe('a failed turn stays at the queue head (Q11)', () => {
  it('keeps a head that failed after 3 words failed at the head, its partial reply marked failed; later items wait', async () => {
    const { threadId, head, later, chunks } = await claimedHead('half an answer [[fail-after:3]]');
    expect(wordsOf(textOfChunks(chunks))).toBe(3);
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(true);

    // What a reload shows: the attempt in the transcript, the failed head first in the queue.
    const detail = await client.detail(threadId);
    expect(detail.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(textOfMessage(detail.messages[2])).toBe('half an answer [[fail-after:3]]');
    const partial = detail.messages[3];
    expect(wordsOf(textOfMessage(partial))).toBe(3);
    expect(partial?.metadata).toMatchObject({ turnId: head.id, failed: true });
    // F3: the contract's words, not what the model's error said.
    expect(partial?.metadata.error).toBe(turnErrorMessages.modelFailed);
    expect(detail.messages[2]?.metadata.failed).toBeUndefined();
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual([
      [head.id, 'failed'],
      [later.id, 'queued'],
    ]);
    expect(detail.turnQueue.items[0]?.error).toBe(partial?.metadata.error);

    // It blocks: nothing can be claimed, and Send now on it is refused too.
    expect((await claim(threadId)).body.error).toMatchObject({ code: 'not_eligible', reason: 'head_failed' });
    const sendNow = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/queue/${head.id}/send-now`,
    );
    expect(sendNow.body.error).toMatchObject({ code: 'not_eligible', reason: 'head_failed' });
    // Its reply is in memory, so the checkpoint copy of it is gone.
    expect((await turnRow(api, head.id))?.partialText).toBe('');
  });

  it('shows a head that failed before any text as its user message with the error', async () => {
    const { threadId, head } = await claimedHead('no answer at all [[fail]]');
    const detail = await client.detail(threadId);
    expect(texts(detail).slice(2)).toEqual(['no answer at all [[fail]]']);
    expect(detail.messages[2]?.metadata).toMatchObject({
      turnId: head.id,
      failed: true,
      error: turnErrorMessages.modelFailed,
    });
    expect(detail.turnQueue.items[0]).toMatchObject({ id: head.id, status: 'failed' });
  });

  it('Retry runs the same text again in place of the failed attempt, which leaves the model context', async () => {
    const { threadId, head } = await claimedHead('broken [[history]] [[fail-after:20]]');
    const retried = await client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('x-turn-id')).toBe(head.id);
    const text = textOfChunks(await readChunks(retried));
    // The model saw the history without the failed attempt (else "broken" would be listed).
    expect(text.startsWith('History: "first" You said: "broken".')).toBe(true);

    const detail = await client.detail(threadId);
    // One attempt only: the failed one was replaced by the retry (which failed again, by its text).
    expect(texts(detail).filter((message) => message.startsWith('broken'))).toHaveLength(1);
    expect(detail.messages).toHaveLength(4);
    expect(textOfMessage(detail.messages[3])).toBe(text);
    expect(detail.turnQueue.items[0]).toMatchObject({ id: head.id, status: 'failed' });
    const stored = await api.runtime.transcript.recall(detail.thread.activeBranchId);
    expect(stored).toHaveLength(4);
  });

  it('refuses Retry on anything but the head, on a finished turn, and while a turn runs', async () => {
    const { threadId, head, later } = await claimedHead('broken [[fail]]');
    const notHead = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/${later.id}/retry`);
    expect([notHead.status, notHead.body.error.code]).toEqual([409, 'not_queue_head']);
    await client.json('DELETE', `/api/threads/${threadId}/queue/${head.id}`);
    const gone = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/${head.id}/retry`);
    expect([gone.status, gone.body.error.code]).toEqual([409, 'not_queued']);

    // "later" (made long) runs; while it does, a retry of the next item is refused with turn_active.
    await client.json('PATCH', `/api/threads/${threadId}/queue/${later.id}`, {
      text: 'long [[words:400]] [[delay:25]]',
    });
    const next = await client.queued(threadId, 'next');
    const claimed = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.headers.get('x-turn-id')).toBe(later.id);
    const busy = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/${next.id}/retry`);
    expect(busy.body.error).toMatchObject({ code: 'not_eligible', reason: 'turn_active' });
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await claimed.body?.cancel();
  });

  it('Edit replaces the failed attempt: the head is queued with the new text and runs when claimed', async () => {
    const { threadId, head, later } = await claimedHead('broken [[fail-after:3]]');
    const edited = await client.json<{ turn: Turn; turnQueue: TurnQueue }>(
      'PATCH',
      `/api/threads/${threadId}/queue/${head.id}`,
      { text: 'fixed [[history]] [[words:8]]' },
    );
    expect(edited.body.turn).toMatchObject({
      status: 'queued',
      error: null,
      text: 'fixed [[history]] [[words:8]]',
    });
    // The failed attempt left the transcript at once.
    expect(texts(await client.detail(threadId))).toHaveLength(2);

    const run = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(run.headers.get('x-turn-id')).toBe(head.id);
    await readChunks(run);
    const after = await client.detail(threadId);
    expect(textOfMessage(after.messages[3]).startsWith('History: "first" You said: "fixed".')).toBe(true);
    expect(after.messages.every((message) => !message.metadata.failed)).toBe(true);
    // Only then does the next item run, in order.
    expect(after.turnQueue.items.map((item) => item.id)).toEqual([later.id]);
    const next = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(textOfChunks(await readChunks(next)).startsWith('History: "first" | "fixed"')).toBe(true);
  });

  it('Delete removes the failed attempt from the transcript and the model context; the next item runs', async () => {
    const { threadId, head, later } = await claimedHead('broken [[fail-after:3]]');
    const deleted = await client.json<{ turn: Turn }>('DELETE', `/api/threads/${threadId}/queue/${head.id}`);
    expect(deleted.body.turn).toMatchObject({ status: 'cancelled', text: '' });
    const detail = await client.detail(threadId);
    expect(detail.messages).toHaveLength(2);
    expect(detail.turnQueue.items.map((item) => item.id)).toEqual([later.id]);

    const next = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(next.headers.get('x-turn-id')).toBe(later.id);
    expect(textOfChunks(await readChunks(next)).startsWith('History: "first" You said: "later".')).toBe(true);
    const row = await turnRow(api, head.id);
    expect([row?.text, row?.partialText]).toEqual(['', '']);
  });
});

describe('a failed head where it meets steers and Stop & send', () => {
  it('keeps a failed head first and blocking while a steer the failed reply missed waits behind it (Q11)', async () => {
    const threadId = await client.createThread();
    // No tool steps: the reply has no step boundary, so the steer can only wait for it to end.
    const running = await client.send(threadId, 'about to break [[words:40]] [[delay:300]] [[fail-after:5]]');
    const failedId = running.headers.get('x-turn-id') ?? '';
    const chunks = iterateChunks(running);
    for (;;) {
      const next = await chunks.next();
      if (next.done || next.value.type === 'text-delta') break;
    }
    const steered = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'a steer that came too late',
      mode: 'steer',
    });
    const steer = ((await steered.json()) as { turn: Turn }).turn;
    expect(steer.status).toBe('steer_pending');
    const later = await client.queued(threadId, 'one more [[words:3]]');
    for await (const _ of chunks);

    const queue = await waitFor(
      () => client.turnQueue(threadId),
      (value) => value.activeTurn === null && value.items[0]?.status !== 'steer_pending',
    );
    expect(queue.items.map((item) => [item.id, item.status])).toEqual([
      [failedId, 'failed'],
      [steer.id, 'queued'],
      [later.id, 'queued'],
    ]);
    const refused = await claim(threadId);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'not_eligible', reason: 'head_failed' });
    expect((await client.turnQueue(threadId)).activeTurn).toBeNull();
  });

  it('refuses Stop & send on a failed head before it interrupts anything: the running reply goes on', async () => {
    const threadId = await client.createThread();
    const running = await client.send(threadId, 'keep going [[words:60]] [[delay:40]]');
    const runningId = running.headers.get('x-turn-id') ?? '';
    await readUntilWords(running, 2);
    // A failed head beside a running reply, however the two came to meet: a refusal must change nothing.
    const { activeBranchId } = (await client.detail(threadId)).thread;
    const [failed] = await api.runtime.database.db
      .insert(schema.chatTurnRequests)
      .values({
        threadId,
        branchId: activeBranchId,
        clientRequestId: crypto.randomUUID(),
        text: 'an earlier failure',
        status: 'failed',
        error: 'The model call failed.',
      })
      .returning();
    const sendNow = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/queue/${failed?.id}/send-now`,
    );
    expect(sendNow.status).toBe(409);
    expect(sendNow.body.error).toMatchObject({ code: 'not_eligible', reason: 'head_failed' });
    const queue = await client.turnQueue(threadId);
    expect(queue.activeTurn).toMatchObject({ id: runningId, status: 'running' });
    await waitFor(
      async () => (await turnRow(api, runningId))?.status,
      (status) => status !== 'running',
      20_000,
    );
    expect((await turnRow(api, runningId))?.status).toBe('completed');
  });
});

describe('the queue every answer and event carries (Q6, Q11)', () => {
  it('is one snapshot: a head that fails while the queue is read is always in it, running or failed', async () => {
    const threadId = await client.createThread();
    const first = await client.send(threadId, 'first [[words:3]] [[delay:40]]');
    const head = await client.queued(threadId, 'the head');
    await readChunks(first);
    await waitFor(
      () => client.turnQueue(threadId),
      (queue) => queue.activeTurn === null,
    );
    const { db } = api.runtime.database;
    const turns = schema.chatTurnRequests;
    // The head's last moment as it runs and fails, over and over, while tabs read the queue.
    let flipping = true;
    const flips = (async () => {
      for (
        let status: 'running' | 'failed' = 'running';
        flipping;
        status = status === 'running' ? 'failed' : 'running'
      )
        await db
          .update(turns)
          // A lease far ahead: no sweep takes the "running" head for a crashed one meanwhile.
          .set({ status, leaseExpiresAt: new Date(Date.now() + 3_600_000) })
          .where(eq(turns.id, head.id));
    })();
    const missing: TurnQueue[] = [];
    try {
      for (let read = 0; read < 400 && missing.length === 0; read += 1) {
        const queues = await Promise.all([1, 2, 3, 4].map(() => readTurnQueue(db, threadId)));
        missing.push(
          ...queues.filter((queue) => queue.activeTurn?.id !== head.id && queue.items[0]?.id !== head.id),
        );
      }
    } finally {
      flipping = false;
      await flips;
    }
    expect(missing).toEqual([]);
  });
});
