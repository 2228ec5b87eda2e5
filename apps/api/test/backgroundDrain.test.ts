import type { HitlRequest, Thread, ThreadDetail, Turn } from '@chat/contracts';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, textOfMessage, waitFor } from './support/client';
import { freshDatabase, startTestApi, type TestApi, turnRow } from './support/testApi';

/**
 * Q15: a chat whose choice is `background` drains on the server with no page open, by the rules
 * of a viewer's claim (Q9-Q12, S3, S5). Nothing here reads a stream after sending or opens the
 * thread's events: no viewer is attached, so whatever runs, the server ran.
 */

let database: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestApi;
let client: ApiClient;
/** Every `turn.settled` the instances announce, by turn. */
const settled = new Map<string, { background?: boolean }>();
let listener: postgres.Sql | undefined;

beforeAll(async () => {
  database = await freshDatabase();
  listener = postgres(database.url, { max: 1, onnotice: () => {} });
  await listener.listen('chat_signals', (payload) => {
    const signal = JSON.parse(payload) as { kind: string; turnId?: string; background?: boolean };
    if (signal.kind === 'turn.settled' && signal.turnId) settled.set(signal.turnId, signal);
  });
  api = await startTestApi(database.url);
  client = await api.client();
});

afterAll(async () => {
  await api?.close();
  await listener?.end();
  await database?.drop();
});

type ErrorBody = { error: { code: string; message: string } };

async function setDrainMode(threadId: string, drainMode: unknown) {
  return await client.json<Thread & ErrorBody>('PATCH', `/api/threads/${threadId}`, { drainMode });
}

/** A new chat whose queue runs in the background. */
async function backgroundChat(): Promise<string> {
  const threadId = await client.createThread();
  const { status } = await setDrainMode(threadId, 'background');
  expect(status).toBe(200);
  return threadId;
}

/** Sends and leaves at once: the reply's stream is dropped unread, like a closed tab. */
async function sendAndLeave(threadId: string, text: string): Promise<string> {
  const response = await client.send(threadId, text);
  expect(response.status).toBe(200);
  await response.body?.cancel();
  return response.headers.get('x-turn-id') ?? '';
}

const idle = (detail: ThreadDetail) => detail.turnQueue.activeTurn === null;
const drained = (detail: ThreadDetail) => idle(detail) && detail.turnQueue.items.length === 0;
const texts = (detail: ThreadDetail) => detail.messages.map((message) => textOfMessage(message));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the choice (PATCH /api/threads/:id { drainMode })', () => {
  it('is viewer for a new chat by default, shown in the detail, the list and the answer', async () => {
    const threadId = await client.createThread();
    expect((await client.detail(threadId)).thread.drainMode).toBe('viewer');
    const { status, body } = await setDrainMode(threadId, 'background');
    expect(status).toBe(200);
    expect(body.drainMode).toBe('background');
    expect((await client.detail(threadId)).thread.drainMode).toBe('background');
    const listed = (await client.allThreads()).find((thread) => thread.id === threadId);
    expect(listed?.drainMode).toBe('background');
    expect((await setDrainMode(threadId, 'viewer')).body.drainMode).toBe('viewer');
    expect((await client.detail(threadId)).thread.drainMode).toBe('viewer');
  });

  it('refuses a bad body with 400 bad_request and changes nothing', async () => {
    const threadId = await client.createThread('kept');
    await setDrainMode(threadId, 'background');
    const before = (await client.detail(threadId)).thread;
    for (const body of [
      { drainMode: 'always' },
      { drainMode: null },
      { drainMode: 1 },
      { drainMode: 'viewer', title: '   ' },
      {},
    ]) {
      const answer = await client.json<ErrorBody>('PATCH', `/api/threads/${threadId}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe('bad_request');
    }
    expect((await client.detail(threadId)).thread).toEqual(before);
  });

  it('renames and sets the choice in one request, and a rename alone keeps the choice', async () => {
    const threadId = await client.createThread();
    const both = await client.json<Thread>('PATCH', `/api/threads/${threadId}`, {
      title: 'Both at once',
      drainMode: 'background',
    });
    expect(both.body).toMatchObject({ title: 'Both at once', drainMode: 'background' });
    const renamed = await client.json<Thread>('PATCH', `/api/threads/${threadId}`, { title: 'Renamed' });
    expect(renamed.body).toMatchObject({ title: 'Renamed', drainMode: 'background' });
  });

  it('is 404 for a chat of someone else', async () => {
    const threadId = await client.createThread();
    const stranger = await api.client();
    const answer = await stranger.json<ErrorBody>('PATCH', `/api/threads/${threadId}`, {
      drainMode: 'background',
    });
    expect(answer.status).toBe(404);
    expect((await client.detail(threadId)).thread.drainMode).toBe('viewer');
  });

  it('takes QUEUE_DRAIN for new chats of an instance so configured', { timeout: 60_000 }, async () => {
    const other = await startTestApi(database.url, { QUEUE_DRAIN: 'background' });
    try {
      const visitor = await other.client();
      const threadId = await visitor.createThread();
      expect((await visitor.detail(threadId)).thread.drainMode).toBe('background');
    } finally {
      await other.close();
    }
  });
});

describe('a settle tells the drain the choice it read under the lock', () => {
  it('background for a chat with the choice on, not for one a viewer drains (no read of its own)', async () => {
    const viewerChat = await client.createThread();
    const viewerTurn = (await client.sendAndRead(viewerChat, 'viewer [[words:2]]')).turnId;
    const backgroundTurn = (await client.sendAndRead(await backgroundChat(), 'background [[words:2]]'))
      .turnId;
    await waitFor(
      async () => [settled.get(viewerTurn), settled.get(backgroundTurn)],
      (both) => both.every((signal) => signal !== undefined),
    );
    expect(settled.get(viewerTurn)?.background).toBe(false);
    expect(settled.get(backgroundTurn)?.background).toBe(true);
  });
});

describe('a chat with the choice on drains with no page open (Q15)', { timeout: 90_000 }, () => {
  it('runs three messages queued behind a running reply, in order, once the sender left', async () => {
    const threadId = await backgroundChat();
    const first = await sendAndLeave(threadId, 'first [[words:40]] [[delay:30]]');
    const queued: Turn[] = [];
    for (const text of ['second [[words:6]]', 'third [[words:6]]', 'fourth [[words:6]]']) {
      queued.push(await client.queued(threadId, text));
    }
    const detail = await waitFor(() => client.detail(threadId), drained, 45_000);
    expect(texts(detail).filter((_, index) => index % 2 === 0)).toEqual([
      'first [[words:40]] [[delay:30]]',
      'second [[words:6]]',
      'third [[words:6]]',
      'fourth [[words:6]]',
    ]);
    expect(detail.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    for (const turnId of [first, ...queued.map((turn) => turn.id)]) {
      expect((await turnRow(api, turnId))?.status).toBe('completed');
    }
  });

  it('runs nothing with the choice off until a page claims (Q10 as before)', async () => {
    const threadId = await client.createThread();
    await sendAndLeave(threadId, 'first [[words:40]] [[delay:30]]');
    const waiting = await client.queued(threadId, 'waits for a page [[words:4]]');
    await waitFor(() => client.detail(threadId), idle, 45_000);
    // Longer than the drain's sweep (a second at this lease) and several settle signals' worth.
    await sleep(2_500);
    const detail = await client.detail(threadId);
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual([[waiting.id, 'queued']]);
    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.status).toBe(200);
    await readChunks(claim);
  });

  it('starts a waiting queue when the choice is turned on', async () => {
    const threadId = await client.createThread();
    await sendAndLeave(threadId, 'first [[words:40]] [[delay:30]]');
    await client.queued(threadId, 'waiting for the switch [[words:4]]');
    await waitFor(() => client.detail(threadId), idle, 45_000);
    expect((await client.detail(threadId)).turnQueue.items).toHaveLength(1);
    await setDrainMode(threadId, 'background');
    const detail = await waitFor(() => client.detail(threadId), drained, 45_000);
    expect(texts(detail).at(-2)).toBe('waiting for the switch [[words:4]]');
  });

  it('stops at a failed head (Q11) and goes on once it is deleted', async () => {
    const threadId = await backgroundChat();
    await sendAndLeave(threadId, 'first [[words:40]] [[delay:30]]');
    const failing = await client.queued(threadId, 'this one fails [[fail]]');
    const after = await client.queued(threadId, 'after the failure [[words:4]]');
    const blocked = await waitFor(
      () => client.detail(threadId),
      (detail) => idle(detail) && detail.turnQueue.items[0]?.status === 'failed',
      45_000,
    );
    expect(blocked.turnQueue.items.map((item) => [item.id, item.status])).toEqual([
      [failing.id, 'failed'],
      [after.id, 'queued'],
    ]);
    await sleep(2_500);
    expect((await client.detail(threadId)).turnQueue.items.map((item) => item.status)).toEqual([
      'failed',
      'queued',
    ]);
    // The failed turn ran once: nothing retries it.
    expect((await turnRow(api, failing.id))?.status).toBe('failed');

    expect((await client.fetch('DELETE', `/api/threads/${threadId}/queue/${failing.id}`)).status).toBe(200);
    const detail = await waitFor(() => client.detail(threadId), drained, 45_000);
    expect(texts(detail).at(-2)).toBe('after the failure [[words:4]]');
    expect((await turnRow(api, after.id))?.status).toBe('completed');
  });

  it('holds while the queue is paused by Stop (S3) and goes on with the handoff once resumed (S5)', async () => {
    const threadId = await backgroundChat();
    const first = await sendAndLeave(threadId, 'stopped [[words:400]] [[delay:20]]');
    const next = await client.queued(threadId, 'next [[words:4]]');
    await client.queued(threadId, 'last [[words:4]]');
    await waitFor(
      () => turnRow(api, first),
      (row) => (row?.partialText.length ?? 0) > 0,
      45_000,
    );
    const stop = await client.json<{ queuePaused?: boolean }>('POST', `/api/threads/${threadId}/interrupt`);
    expect(stop.body.queuePaused).toBe(true);
    await sleep(2_500);
    const paused = await client.detail(threadId);
    expect(paused.turnQueue.activeTurn).toBeNull();
    expect(paused.turnQueue.items.map((item) => item.status)).toEqual(['queued', 'queued']);

    const resume = await client.fetch('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    expect(resume.status).toBe(200);
    await waitFor(() => client.detail(threadId), drained, 45_000);
    const ran = await turnRow(api, next.id);
    expect(ran?.status).toBe('completed');
    // The first turn after an interrupt gets the hidden handoff, however it was claimed.
    expect(ran?.handoff).toBe(true);
  });

  it('holds while a tool approval is pending (Q12) and goes on once it is decided', async () => {
    const threadId = await backgroundChat();
    await sendAndLeave(threadId, 'remember this [[tool:save_note]] [[words:6]]');
    const waiting = await client.queued(threadId, 'after the approval [[words:4]]');
    const asking = await waitFor(
      () => client.detail(threadId),
      (detail) => detail.hitl.some((request) => request.status === 'pending'),
      45_000,
    );
    await sleep(2_500);
    const still = await client.detail(threadId);
    expect(still.turnQueue.activeTurn?.status).toBe('awaiting_approval');
    expect(still.turnQueue.items.map((item) => [item.id, item.status])).toEqual([[waiting.id, 'queued']]);

    const request = asking.hitl.find((entry) => entry.status === 'pending') as HitlRequest;
    const decided = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
      decision: 'approve',
    });
    expect(decided.status).toBe(200);
    await decided.body?.cancel();
    await waitFor(() => client.detail(threadId), drained, 45_000);
    expect((await turnRow(api, waiting.id))?.status).toBe('completed');
  });
});
