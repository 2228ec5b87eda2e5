import type { ErrorBody, Turn, TurnQueue } from '@chat/contracts';
import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { HANDOFF_INSTRUCTION } from '../src/agent/handoffInstruction';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readUntilWords,
  type StreamChunk,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const SLOW = '[[words:400]] [[delay:25]]';

/** A thread with a long reply running; the sender's stream is left open in the background. */
async function threadWithRunningTurn(): Promise<{ threadId: string; turnId: string; reply: Response }> {
  const threadId = await client.createThread();
  const reply = await client.send(threadId, `long answer ${SLOW}`);
  expect(reply.status).toBe(200);
  return { threadId, turnId: reply.headers.get('x-turn-id') ?? '', reply };
}

async function turnRows(threadId: string) {
  return await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
}

describe('queueing while a turn runs (Q3, Q4, Q6)', () => {
  it('queues a send while a reply streams and lists it in turnQueue.items', async () => {
    const { threadId, turnId } = await threadWithRunningTurn();
    const response = await client.send(threadId, 'follow-up one', 'f1');
    expect(response.status).toBe(202);
    const body = (await response.json()) as { turn: Turn; turnQueue: TurnQueue };
    expect(body.turn).toMatchObject({
      status: 'queued',
      text: 'follow-up one',
      clientRequestId: 'f1',
      threadId,
    });
    expect(body.turnQueue.activeTurn?.id).toBe(turnId);
    expect(body.turnQueue.items.map((item) => item.id)).toEqual([body.turn.id]);

    const detail = await client.detail(threadId);
    expect(detail.turnQueue.activeTurn).toMatchObject({ id: turnId, status: 'running' });
    expect(detail.turnQueue.items.map((item) => item.text)).toEqual(['follow-up one']);
    // Queued turns are not part of the transcript (Q7).
    expect(detail.messages.map((message) => textOfMessage(message))).not.toContain('follow-up one');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('refuses a sixth queued turn with queue_full and changes nothing (Q4)', async () => {
    const { threadId } = await threadWithRunningTurn();
    for (let i = 1; i <= 5; i += 1) await client.queued(threadId, `queued ${i}`);
    const before = await client.turnQueue(threadId);
    const refused = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: 'sixth',
      text: 'one too many',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('queue_full');
    const after = await client.turnQueue(threadId);
    expect(after.items.map((item) => item.text)).toEqual([
      'queued 1',
      'queued 2',
      'queued 3',
      'queued 4',
      'queued 5',
    ]);
    expect(after).toEqual(before);
    expect(await turnRows(threadId)).toHaveLength(6);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('holds under 50 parallel sends: 1 running, 5 queued, 44 queue_full, and retries create nothing', async () => {
    const threadId = await client.createThread();
    const sends = Array.from({ length: 50 }, (_, i) => ({
      id: `parallel-${i}`,
      text: `parallel ${i} ${SLOW}`,
    }));
    const responses = await Promise.all(sends.map((send) => client.send(threadId, send.text, send.id)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 202)).toHaveLength(5);
    expect(statuses.filter((status) => status === 409)).toHaveLength(44);
    expect(statuses.filter((status) => status >= 500)).toHaveLength(0);
    for (const response of responses) {
      if (response.status === 409)
        expect(((await response.json()) as ErrorBody).error.code).toBe('queue_full');
    }
    expect(await turnRows(threadId)).toHaveLength(6);

    const retries = await Promise.all(sends.map((send) => client.send(threadId, send.text, send.id)));
    expect(retries.filter((response) => response.status >= 500)).toHaveLength(0);
    expect(await turnRows(threadId)).toHaveLength(6);
    const queue = await client.turnQueue(threadId);
    expect(queue.activeTurn?.status).toBe('running');
    expect(queue.items).toHaveLength(5);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    for (const response of [...responses, ...retries]) if (!response.bodyUsed) await response.body?.cancel();
  });
});

describe('editing and deleting queued turns (Q8)', () => {
  it('edits a queued turn in place and keeps its position', async () => {
    const { threadId } = await threadWithRunningTurn();
    const first = await client.queued(threadId, 'first');
    const second = await client.queued(threadId, 'second');
    const edited = await client.json<{ turn: Turn; turnQueue: TurnQueue }>(
      'PATCH',
      `/api/threads/${threadId}/queue/${first.id}`,
      { text: '  first, revised  ' },
    );
    expect(edited.status).toBe(200);
    expect(edited.body.turn).toMatchObject({ id: first.id, text: 'first, revised', status: 'queued' });
    expect(edited.body.turnQueue.items.map((item) => item.id)).toEqual([first.id, second.id]);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('deletes a queued turn (cancelled) and keeps the rest in order', async () => {
    const { threadId } = await threadWithRunningTurn();
    const first = await client.queued(threadId, 'first');
    const second = await client.queued(threadId, 'second');
    const third = await client.queued(threadId, 'third');
    const deleted = await client.json<{ turn: Turn; turnQueue: TurnQueue }>(
      'DELETE',
      `/api/threads/${threadId}/queue/${second.id}`,
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body.turn.status).toBe('cancelled');
    expect(deleted.body.turnQueue.items.map((item) => item.id)).toEqual([first.id, third.id]);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('refuses to edit or delete a running or finished turn with not_queued, changing nothing', async () => {
    const { threadId, turnId } = await threadWithRunningTurn();
    for (const [method, body] of [
      ['PATCH', { text: 'rewrite history' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await client.json<ErrorBody>(method, `/api/threads/${threadId}/queue/${turnId}`, body);
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('not_queued');
    }
    const queue = await client.turnQueue(threadId);
    expect(queue.activeTurn).toMatchObject({ id: turnId, status: 'running', text: `long answer ${SLOW}` });
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    const finished = await client.json<ErrorBody>('DELETE', `/api/threads/${threadId}/queue/${turnId}`);
    expect(finished.body.error.code).toBe('not_queued');
  });

  it('refuses empty or oversized edits and unknown turns', async () => {
    const { threadId } = await threadWithRunningTurn();
    const queued = await client.queued(threadId, 'keep this text');
    const empty = await client.json<ErrorBody>('PATCH', `/api/threads/${threadId}/queue/${queued.id}`, {
      text: ' ',
    });
    expect([empty.status, empty.body.error.code]).toEqual([400, 'bad_request']);
    const huge = await client.json<ErrorBody>('PATCH', `/api/threads/${threadId}/queue/${queued.id}`, {
      text: 'z'.repeat(32_001),
    });
    expect([huge.status, huge.body.error.code]).toEqual([413, 'too_large']);
    const unknown = await client.json<ErrorBody>(
      'PATCH',
      `/api/threads/${threadId}/queue/00000000-0000-4000-8000-000000000000`,
      { text: 'x' },
    );
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
    expect((await client.turnQueue(threadId)).items[0]?.text).toBe('keep this text');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('makes a failed head runnable again when edited, and lets it be deleted (Q11)', async () => {
    const threadId = await client.createThread();
    await readChunks(await client.send(threadId, 'broken [[fail]]'));
    const [failed] = (await client.turnQueue(threadId)).items;
    expect(failed?.status).toBe('failed');
    const edited = await client.json<{ turn: Turn }>(
      'PATCH',
      `/api/threads/${threadId}/queue/${failed?.id}`,
      {
        text: 'fixed now [[words:4]]',
      },
    );
    expect(edited.body.turn).toMatchObject({ status: 'queued', error: null, text: 'fixed now [[words:4]]' });
    const claimed = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.status).toBe(200);
    expect(textOfChunks(await readChunks(claimed))).toBe('You said: "fixed now".');
    const detail = await client.detail(threadId);
    expect(detail.messages.map((message) => textOfMessage(message))).toEqual([
      'fixed now [[words:4]]',
      'You said: "fixed now".',
    ]);
    expect(detail.turnQueue.items).toEqual([]);

    await readChunks(await client.send(threadId, 'broken again [[fail]]'));
    const [again] = (await client.turnQueue(threadId)).items;
    const deleted = await client.json<{ turn: Turn }>(
      'DELETE',
      `/api/threads/${threadId}/queue/${again?.id}`,
    );
    expect(deleted.body.turn.status).toBe('cancelled');
    expect((await client.turnQueue(threadId)).items).toEqual([]);
  });
});

describe('Stop: a server interrupt (S1-S3)', () => {
  it('stops the model, keeps the partial reply marked interrupted, releases the lock, keeps the queue', async () => {
    const { threadId, turnId, reply } = await threadWithRunningTurn();
    const seen = await readUntilWords(reply, 6);
    const queued = await client.queued(threadId, 'waiting in line [[words:7]]');

    const stop = await client.json<{ turn: Turn; queuePaused?: boolean }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(stop.status).toBe(200);
    expect(stop.body.turn).toMatchObject({ id: turnId, status: 'interrupted' });

    // The lock is clear when the interrupt answers; the queue is untouched (S3).
    const detail = await client.detail(threadId);
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.turnQueue.items.map((item) => item.id)).toEqual([queued.id]);
    const partial = detail.messages[1];
    expect(partial?.role).toBe('assistant');
    expect(partial?.metadata.interrupted).toBe(true);
    const partialText = textOfMessage(partial);
    expect(partialText.startsWith(seen.trim())).toBe(true);
    expect(partialText.split(/\s+/).length).toBeLessThan(400);

    // The interrupted reply is in memory, so its checkpoint copy is gone.
    expect((await turnRows(threadId)).find((row) => row.id === turnId)?.partialText).toBe('');

    // Stop paused the queue (S3); once resumed, the head runs on a viewer's claim, with the
    // handoff (S5).
    expect(stop.body).toMatchObject({ queuePaused: true });
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    const claimed = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.status).toBe(200);
    expect(claimed.headers.get('x-turn-id')).toBe(queued.id);
    expect(textOfChunks(await readChunks(claimed))).toBe('(after interruption) You said: "waiting in line".');
  });

  it('answers { turn: null } when nothing runs', async () => {
    const threadId = await client.createThread();
    const stop = await client.json<{ turn: null }>('POST', `/api/threads/${threadId}/interrupt`);
    expect(stop).toMatchObject({ status: 200, body: { turn: null } });
  });

  it('interrupts before the first word: no reply is kept, the user message stays', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'slow start [[delay:2000]] [[words:3]]');
    const stop = await client.json<{ turn: Turn }>('POST', `/api/threads/${threadId}/interrupt`);
    expect(stop.body.turn.status).toBe('interrupted');
    await reply.body?.cancel();
    const detail = await client.detail(threadId);
    expect(detail.messages.map((message) => message.role)).toEqual(['user']);
  });

  it('ends the reply stream of every subscriber when interrupted', async () => {
    const { threadId, reply } = await threadWithRunningTurn();
    const chunks: StreamChunk[] = [];
    const reading = (async () => {
      for await (const chunk of iterateChunks(reply)) chunks.push(chunk);
    })();
    await waitFor(
      async () => chunks.length,
      (count) => count > 5,
    );
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await reading;
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { interrupted: true } });
  });
});

describe('Stop with items waiting pauses the queue (S3)', () => {
  const resume = (threadId: string) =>
    client.json<{ turnQueue: TurnQueue }>('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });

  it('answers queuePaused, claims nothing until Resume, and keeps every item', async () => {
    const { threadId, turnId, reply } = await threadWithRunningTurn();
    await readUntilWords(reply, 3);
    const queued = await client.queued(threadId, 'after the stop [[words:7]]');

    const stop = await client.json<{ turn: Turn; queuePaused?: boolean }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(stop.status).toBe(200);
    expect(stop.body).toMatchObject({ turn: { id: turnId, status: 'interrupted' }, queuePaused: true });
    const { turnQueue } = await client.detail(threadId);
    expect(turnQueue).toMatchObject({ activeTurn: null, paused: true });
    expect(turnQueue.items.map((item) => [item.id, item.status])).toEqual([[queued.id, 'queued']]);
    const claim = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.status).toBe(409);
    expect(claim.body.error).toMatchObject({ code: 'not_eligible', reason: 'queue_paused' });

    expect((await resume(threadId)).body.turnQueue.paused).toBe(false);
    const claimed = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.headers.get('x-turn-id')).toBe(queued.id);
    expect(textOfChunks(await readChunks(claimed))).toBe('(after interruption) You said: "after the stop".');
  });

  it('leaves an empty queue running: the answer is { turn } alone', async () => {
    const { threadId, turnId, reply } = await threadWithRunningTurn();
    await readUntilWords(reply, 2);
    const stop = await client.json('POST', `/api/threads/${threadId}/interrupt`);
    expect(stop.body).toEqual({ turn: expect.objectContaining({ id: turnId, status: 'interrupted' }) });
    expect((await client.detail(threadId)).turnQueue.paused).toBe(false);
    const next = await client.send(threadId, 'a new message runs at once [[words:3]]');
    expect(next.status).toBe(200);
    await readChunks(next);
  });

  it('ends the pause when its last item is deleted: the next message runs at once', async () => {
    const { threadId, reply } = await threadWithRunningTurn();
    await readUntilWords(reply, 2);
    const first = await client.queued(threadId, 'first [[words:3]]');
    const second = await client.queued(threadId, 'second [[words:3]]');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    expect((await client.turnQueue(threadId)).paused).toBe(true);

    // One left: the pause still holds it.
    const one = await client.json<{ turnQueue: TurnQueue }>(
      'DELETE',
      `/api/threads/${threadId}/queue/${first.id}`,
    );
    expect(one.status).toBe(200);
    expect(one.body.turnQueue).toMatchObject({ paused: true, items: [{ id: second.id }] });
    // None left: nothing to hold, the answer and the detail say the queue is not paused.
    const last = await client.json<{ turnQueue: TurnQueue }>(
      'DELETE',
      `/api/threads/${threadId}/queue/${second.id}`,
    );
    expect(last.status).toBe(200);
    expect(last.body.turnQueue).toMatchObject({ paused: false, items: [], activeTurn: null });
    expect((await client.turnQueue(threadId)).paused).toBe(false);

    const next = await client.send(threadId, 'a new message runs at once [[words:20]]');
    expect(next.status).toBe(200);
    expect(textOfChunks(await readChunks(next))).toContain('You said: "a new message runs at once"');
  });

  it('un-pauses on Send now and on Stop & send of the head: explicit choices to go on', async () => {
    const { threadId, reply } = await threadWithRunningTurn();
    await readUntilWords(reply, 2);
    const first = await client.queued(threadId, 'first [[words:400]] [[delay:25]]');
    const second = await client.queued(threadId, 'second [[words:5]]');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    expect((await client.turnQueue(threadId)).paused).toBe(true);

    // Send now on the head of the paused queue: it runs, and the queue goes on after it.
    const sendNow = await client.fetch('POST', `/api/threads/${threadId}/queue/${first.id}/send-now`);
    expect(sendNow.status).toBe(200);
    await readUntilWords(sendNow, 2);
    expect((await client.turnQueue(threadId)).paused).toBe(false);

    // Paused again while it runs; Stop & send on the next head interrupts it and un-pauses.
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: true });
    const stopAndSend = await client.fetch('POST', `/api/threads/${threadId}/queue/${second.id}/send-now`);
    expect(stopAndSend.status).toBe(200);
    expect(textOfChunks(await readChunks(stopAndSend))).toBe('(after interruption) You said: "second".');
    expect((await client.turnQueue(threadId)).paused).toBe(false);
  });
});

describe('claiming the queue head (Q9, Q10)', () => {
  it('refuses a claim while a turn runs or when the queue is empty, with the reason', async () => {
    const { threadId } = await threadWithRunningTurn();
    const busy = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/claim`);
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 'not_eligible', reason: 'turn_active' });
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    const empty = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/claim`);
    expect(empty.body.error).toMatchObject({ code: 'not_eligible', reason: 'queue_empty' });
  });

  it('lets exactly one of two racing viewers claim the head', async () => {
    const { threadId } = await threadWithRunningTurn();
    await client.queued(threadId, 'next [[words:3]]');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    const claims = await Promise.all([
      client.fetch('POST', `/api/threads/${threadId}/queue/claim`),
      client.fetch('POST', `/api/threads/${threadId}/queue/claim`),
    ]);
    expect(claims.map((claim) => claim.status).sort()).toEqual([200, 409]);
    for (const claim of claims) await claim.body?.cancel();
  });

  it('refuses Send now on anything but the head with not_queue_head', async () => {
    const { threadId } = await threadWithRunningTurn();
    await client.queued(threadId, 'head');
    const second = await client.queued(threadId, 'second');
    const refused = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/queue/${second.id}/send-now`,
    );
    expect([refused.status, refused.body.error.code]).toEqual([409, 'not_queue_head']);
    expect((await client.turnQueue(threadId)).activeTurn?.status).toBe('running');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('sends the head at once with Send now when idle, without the handoff after a finished reply', async () => {
    const threadId = await client.createThread();
    const running = await client.send(threadId, 'short one [[words:8]] [[delay:40]]');
    const head = await client.queued(threadId, 'go now [[words:4]]');
    await readChunks(running);
    await waitFor(
      () => client.turnQueue(threadId),
      (queue) => queue.activeTurn === null,
    );
    const sent = await client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    expect(sent.status).toBe(200);
    expect(textOfChunks(await readChunks(sent))).toBe('You said: "go now".');
  });
});

describe('Stop & send: the interrupt handoff (S4, S5)', () => {
  it('interrupts the running reply and runs the head with the hidden handoff instruction', async () => {
    const { threadId, turnId, reply } = await threadWithRunningTurn();
    await readUntilWords(reply, 5);
    const head = await client.queued(threadId, 'actually, only the short version [[words:20]]');

    const sent = await client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    expect(sent.status).toBe(200);
    expect(sent.headers.get('x-turn-id')).toBe(head.id);
    const chunks = await readChunks(sent);
    const text = textOfChunks(chunks);
    // The local model opens with this line only when the handoff instruction reached it.
    expect(text.startsWith('(after interruption) You said: "actually, only the short version".')).toBe(true);

    const detail = await client.detail(threadId);
    expect(detail.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(detail.messages[1]?.metadata.interrupted).toBe(true);
    expect(detail.turnQueue).toEqual({ activeTurn: null, items: [], paused: false });
    const rows = await turnRows(threadId);
    expect(rows.find((row) => row.id === turnId)?.status).toBe('interrupted');

    // The instruction is never visible: not in the stream, the thread detail or memory.
    const marker = HANDOFF_INSTRUCTION.split('\n')[1] ?? HANDOFF_INSTRUCTION;
    expect(JSON.stringify(chunks)).not.toContain('Interrupt handoff');
    expect(JSON.stringify(detail)).not.toContain('Interrupt handoff');
    expect(JSON.stringify(detail)).not.toContain(marker);
    const stored = await api.runtime.transcript.recall(detail.thread.activeBranchId);
    expect(stored).toHaveLength(4);
    expect(JSON.stringify(stored)).not.toContain('Interrupt handoff');
    const [raw] = await api.runtime.database.db.$client`
      select count(*)::int as hits from mastra.mastra_messages where content like ${'%Interrupt handoff%'}`;
    expect(raw?.hits).toBe(0);
  });
});

describe('thread events (SSE)', () => {
  it('starts with a queue snapshot and reports turns starting and settling', async () => {
    const threadId = await client.createThread();
    const controller = new AbortController();
    const response = await client.fetch('GET', `/api/threads/${threadId}/events`, undefined, {
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events: StreamChunk[] = [];
    const reading = (async () => {
      try {
        for await (const event of iterateChunks(response)) events.push(event);
      } catch {
        // Aborted below.
      }
    })();
    await waitFor(
      async () => events.length,
      (count) => count >= 1,
    );
    expect(events[0]).toMatchObject({
      type: 'queue.changed',
      threadId,
      turnQueue: { activeTurn: null, items: [], paused: false },
    });
    const { turnId } = await client.sendAndRead(threadId, 'hello [[words:3]]');
    await waitFor(
      async () => events.map((event) => event.type),
      (types) => types.includes('turn.settled'),
    );
    const started = events.find((event) => event.type === 'turn.started');
    const settled = events.find((event) => event.type === 'turn.settled');
    expect(started).toMatchObject({ turn: { id: turnId, status: 'running' } });
    expect(settled).toMatchObject({
      turn: { id: turnId, status: 'completed' },
      turnQueue: { activeTurn: null },
    });
    controller.abort();
    await reading;
  });
});
