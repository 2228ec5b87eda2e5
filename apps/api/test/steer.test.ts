import { Writable } from 'node:stream';
import { schema } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { eq } from 'drizzle-orm';
import { serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { markSteerDelivered } from '../src/chats/turns/steer/repository';
import { createLogger } from '../src/platform/logger';
import { createRuntime, type Runtime } from '../src/runtime';
import { ApiClient, iterateChunks, readChunks, type StreamChunk, textOfChunks } from './support/client';
import { pngBytes, uploaded } from './support/images';
import { freshDatabase, testConfig } from './support/testApi';

/** Everything the API logs, at debug level: the steer reminder must never be among it. */
const lines: string[] = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    lines.push(String(chunk));
    done();
  },
});

let database: TestDatabase;
let runtime: Runtime;
let client: ApiClient;
let close: () => Promise<void>;

beforeAll(async () => {
  database = await freshDatabase();
  const config = testConfig(database.url, { LOG_LEVEL: 'debug' });
  runtime = await createRuntime(config, createLogger('debug', capture));
  const server = serve(createApp(runtime.services), { port: 0, hostname: '127.0.0.1', silent: true });
  await server.ready();
  const baseUrl = (server.url ?? '').replace(/\/$/, '');
  client = await ApiClient.signIn(baseUrl);
  close = async () => {
    await server.close(true);
    await runtime.close();
  };
});

afterAll(async () => {
  await close?.();
  await database?.drop();
});

const REMINDER = 'Steer reminder';

/**
 * What a step boundary leaves when its commit lands and the answer never reaches the runner: a
 * steer sent into the running turn is delivered into it, and the run is not told. Returns the
 * message id the database gave it.
 */
async function deliveredUnheard(threadId: string, runningTurnId: string, text: string): Promise<string> {
  const sent = await steer(threadId, text);
  const { turn } = (await sent.json()) as { turn: { id: string } };
  const rows = await turnRows(threadId);
  const pending = rows.find((row) => row.id === turn.id);
  const running = rows.find((row) => row.id === runningTurnId);
  expect([pending?.status, running?.status]).toEqual(['steer_pending', 'running']);
  const messageId = crypto.randomUUID();
  await markSteerDelivered(runtime.database.db, pending as never, running?.branchId ?? '', messageId);
  return messageId;
}

function steer(threadId: string, text: string, clientRequestId: string = crypto.randomUUID()) {
  return client.fetch('POST', `/api/threads/${threadId}/turns`, { clientRequestId, text, mode: 'steer' });
}

async function turnRows(threadId: string) {
  return await runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
}

/** Reads a reply stream until a chunk matches, keeping every chunk; the rest stays unread. */
async function readUntil(stream: AsyncGenerator<StreamChunk>, match: (chunk: StreamChunk) => boolean) {
  const seen: StreamChunk[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done) return seen;
    seen.push(next.value);
    if (match(next.value)) return seen;
  }
}

function textsOf(message: { parts: { type: string; text?: string }[] }): string {
  return message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

describe('steer: a message folded into the running reply at its next step', () => {
  it('delivers a steer sent during step 1 of 3: delivered row, rolled transcript, (steered) continuation, history in place', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'plan my trip [[steps:3]] [[delay:150]] [[words:12]]');
    expect(reply.status).toBe(200);
    const chunks = iterateChunks(reply);
    const before = await readUntil(chunks, (chunk) => chunk.type === 'tool-input-available');

    const sent = await steer(threadId, 'also book a hotel');
    expect(sent.status).toBe(202);
    const { turn } = (await sent.json()) as { turn: { id: string; status: string; steer: boolean } };
    expect(turn.status).toBe('steer_pending');
    expect(turn.steer).toBe(true);

    const after: StreamChunk[] = [];
    for await (const chunk of chunks) after.push(chunk);
    const boundary = after.find((chunk) => chunk.type === 'data-steer-boundary');
    expect(boundary).toBeDefined();
    const continuation = textOfChunks(after.slice(after.indexOf(boundary as StreamChunk)));
    expect(
      continuation.startsWith('(steered) You added: "also book a hotel". You said: "plan my trip".'),
    ).toBe(true);
    expect(JSON.stringify([...before, ...after])).not.toContain(REMINDER);

    const rows = await turnRows(threadId);
    expect(rows.find((row) => row.id === turn.id)?.status).toBe('delivered');

    const { messages } = await client.detail(threadId);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(textsOf(messages[2] as never)).toBe('also book a hotel');
    expect(textsOf(messages[3] as never).startsWith('(steered)')).toBe(true);
    expect(JSON.stringify(messages)).not.toContain(REMINDER);
    // The transcript keeps saying which message was a steer; the message it joined was not one.
    expect(messages.map((message) => message.metadata.steered ?? false)).toEqual([false, false, true, false]);

    const later = await client.sendAndRead(threadId, 'what did I say? [[history]] [[words:5]]');
    expect(textOfChunks(later.chunks)).toContain('History: "plan my trip" | "also book a hotel"');
    expect(lines.join('')).not.toContain(REMINDER);
    expect(lines.join('')).not.toContain('also book a hotel');
  });

  it('answers a steer the database took in though its run never heard (the boundary commit whose answer an outage lost): the next boundary hands it over', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'plan my week [[steps:3]] [[delay:800]] [[words:20]]');
    const running = reply.headers.get('x-turn-id') ?? '';
    const chunks = iterateChunks(reply);
    // Step 2 has begun: its boundary, the next one, is a whole delay away. The test's own writes
    // below must land before it, or the run claims the steer first.
    let steps = 0;
    await readUntil(chunks, (chunk) => chunk.type === 'start-step' && ++steps === 2);
    const messageId = await deliveredUnheard(threadId, running, 'keep Sunday free');

    const after: StreamChunk[] = [];
    for await (const chunk of chunks) after.push(chunk);
    const boundary = after.find((chunk) => chunk.type === 'data-steer-boundary') as
      | { data: { steers: Array<{ messageId: string; text: string }> } }
      | undefined;
    expect(boundary?.data.steers.map((taken) => [taken.messageId, taken.text])).toEqual([
      [messageId, 'keep Sunday free'],
    ]);
    const continuation = textOfChunks(after.slice(after.indexOf(boundary as never)));
    expect(continuation).toMatch(/^\(steered\) You added: "keep Sunday free"\. You said: "plan my week"\./);
    const settled = (await turnRows(threadId)).find((row) => row.id === running);
    expect(settled?.status).toBe('completed');
    // Stored once, under the id the database gave it, and answered.
    const { messages } = await client.detail(threadId);
    expect(messages.map((message) => [message.role, message.id === messageId])).toEqual([
      ['user', false],
      ['assistant', false],
      ['user', true],
      ['assistant', false],
    ]);
    expect(textsOf(messages[3] as never).startsWith('(steered)')).toBe(true);
  });

  it('keeps after the reply a steer the database took in unheard when no boundary is left to hand it over', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'one step [[steps:1]] [[delay:40]] [[words:30]]');
    const running = reply.headers.get('x-turn-id') ?? '';
    const chunks = iterateChunks(reply);
    // The answer is streaming: there is no step boundary left in this reply.
    await readUntil(chunks, (chunk) => chunk.type === 'text-delta');
    const messageId = await deliveredUnheard(threadId, running, 'keep Sunday free');

    const after: StreamChunk[] = [];
    for await (const chunk of chunks) after.push(chunk);
    expect(after.some((chunk) => chunk.type === 'data-steer-boundary')).toBe(false);
    const settled = (await turnRows(threadId)).find((row) => row.id === running);
    expect(settled?.status).toBe('completed');
    const { messages } = await client.detail(threadId);
    expect(messages.map((message) => [message.role, message.id === messageId])).toEqual([
      ['user', false],
      ['assistant', false],
      ['user', true],
    ]);
    expect(textsOf(messages[2] as never)).toBe('keep Sunday free');
  });

  it('requeues a steer sent during the last step at the head; claimed, its run gets the reminder', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'one step [[steps:1]] [[delay:40]] [[words:30]]');
    const chunks = iterateChunks(reply);
    // The answer is streaming: there is no step boundary left in this reply.
    await readUntil(chunks, (chunk) => chunk.type === 'text-delta');
    const queued = await client.queued(threadId, 'an ordinary follow-up [[words:4]]');
    const sent = await steer(threadId, 'shorter please [[words:6]]');
    const { turn } = (await sent.json()) as { turn: { id: string } };
    let queue = await client.turnQueue(threadId);
    expect(queue.items.map((item) => item.id)).toEqual([turn.id, queued.id]);
    for await (const _ of chunks);

    queue = await client.turnQueue(threadId);
    expect(queue.items.map((item) => [item.id, item.status])).toEqual([
      [turn.id, 'queued'],
      [queued.id, 'queued'],
    ]);
    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.headers.get('x-turn-id')).toBe(turn.id);
    const claimed = await readChunks(claim);
    expect(textOfChunks(claimed)).toMatch(/^\(steered\) You said: "shorter please"\./);
    expect(JSON.stringify(claimed)).not.toContain(REMINDER);
    const { messages } = await client.detail(threadId);
    expect(JSON.stringify(messages)).not.toContain(REMINDER);
    // It ran as a message of its own, not inside a running reply: not marked as a steer.
    expect(messages.some((message) => message.metadata.steered)).toBe(false);
  });

  it('Stop & send on a pending steer: the reply stops, the steer runs at once with the handoff and the reminder', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'slow steps [[steps:3]] [[delay:2000]] [[words:5]]');
    const chunks = iterateChunks(reply);
    await readUntil(chunks, (chunk) => chunk.type === 'start');
    const sent = await steer(threadId, 'never mind, summarise [[words:12]]');
    const { turn } = (await sent.json()) as { turn: { id: string } };
    const stopAndSend = await client.fetch('POST', `/api/threads/${threadId}/queue/${turn.id}/send-now`);
    expect(stopAndSend.status).toBe(200);
    expect(stopAndSend.headers.get('x-turn-id')).toBe(turn.id);
    expect(textOfChunks(await readChunks(stopAndSend))).toMatch(
      /^\(after interruption\) \(steered\) You said: "never mind, summarise"\./,
    );
    for await (const _ of chunks);
    const rows = await turnRows(threadId);
    expect(rows.map((row) => row.status).sort()).toEqual(['completed', 'interrupted']);
  });

  it('edits and deletes pending steers in the Dock until they are delivered (Q8)', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'plan my day [[steps:1]] [[delay:3000]] [[words:2]]');
    const chunks = iterateChunks(reply);
    await readUntil(chunks, (chunk) => chunk.type === 'start');
    const kept = ((await (await steer(threadId, 'add lunch')).json()) as { turn: { id: string } }).turn;
    const dropped = ((await (await steer(threadId, 'add a nap')).json()) as { turn: { id: string } }).turn;

    const edited = await client.json<{ turn: { id: string; status: string; text: string } }>(
      'PATCH',
      `/api/threads/${threadId}/queue/${kept.id}`,
      { text: 'add dinner' },
    );
    expect(edited.status).toBe(200);
    expect(edited.body.turn).toMatchObject({ id: kept.id, status: 'steer_pending', text: 'add dinner' });
    const deleted = await client.json<{ turnQueue: { items: { id: string }[] } }>(
      'DELETE',
      `/api/threads/${threadId}/queue/${dropped.id}`,
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body.turnQueue.items.map((item) => item.id)).toEqual([kept.id]);

    const after: StreamChunk[] = [];
    for await (const chunk of chunks) after.push(chunk);
    const boundary = after.find((chunk) => chunk.type === 'data-steer-boundary') as
      | { data: { steers: { turnId: string; text: string }[] } }
      | undefined;
    expect(boundary?.data.steers.map((delivered) => [delivered.turnId, delivered.text])).toEqual([
      [kept.id, 'add dinner'],
    ]);
    const rows = await turnRows(threadId);
    expect(rows.find((row) => row.id === kept.id)?.status).toBe('delivered');
    expect(rows.find((row) => row.id === dropped.id)).toMatchObject({ status: 'cancelled', text: '' });
    const shown = (await client.detail(threadId)).messages.map((message) => textsOf(message as never));
    expect(shown).toContain('add dinner');
    expect(shown.join(' ')).not.toMatch(/add lunch|add a nap/);

    // Delivered, it is part of the reply: no longer in the Dock.
    const late = await client.json<{ error: { code: string } }>(
      'PATCH',
      `/api/threads/${threadId}/queue/${kept.id}`,
      { text: 'too late' },
    );
    expect([late.status, late.body.error.code]).toEqual([409, 'not_queued']);
  });

  it('queues a pending steer as a steer when an edit gives it images: they reach the model whole only in a run of its own', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'slow steps [[steps:2]] [[delay:3000]] [[words:2]]');
    const chunks = iterateChunks(reply);
    await readUntil(chunks, (chunk) => chunk.type === 'start');
    const { turn } = (await (await steer(threadId, 'look at this')).json()) as { turn: { id: string } };
    const image = await uploaded(client, threadId, pngBytes(8, 8));
    const edited = await client.json<{
      turn: { status: string; steer: boolean; attachments: { id: string }[] };
    }>('PATCH', `/api/threads/${threadId}/queue/${turn.id}`, {
      text: 'look at this picture',
      attachmentIds: [image.id],
    });
    expect(edited.status).toBe(200);
    expect(edited.body.turn).toMatchObject({ status: 'queued', steer: true });
    expect(edited.body.turn.attachments.map((attachment) => attachment.id)).toEqual([image.id]);
    await client.fetch('POST', `/api/threads/${threadId}/interrupt`);
    await chunks.return(undefined);
    expect((await turnRows(threadId)).find((row) => row.id === turn.id)?.status).toBe('queued');
  });

  it('queues a steer (with the reminder) while the reply waits for an approval: nothing runs to take it in', async () => {
    const threadId = await client.createThread();
    await readChunks(await client.send(threadId, 'remember this [[tool:save_note]]'));
    expect((await client.turnQueue(threadId)).activeTurn?.status).toBe('awaiting_approval');
    const sent = await steer(threadId, 'and that too');
    expect(sent.status).toBe(202);
    const { turn } = (await sent.json()) as { turn: { status: string; steer: boolean } };
    expect([turn.status, turn.steer]).toEqual(['queued', true]);
    await client.fetch('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('records a retried steer (same clientRequestId) once', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'long one [[steps:3]] [[delay:150]] [[words:5]]');
    const chunks = iterateChunks(reply);
    await readUntil(chunks, (chunk) => chunk.type === 'tool-input-available');
    const id = crypto.randomUUID();
    const first = await steer(threadId, 'one more thing', id);
    const second = await steer(threadId, 'one more thing', id);
    expect([first.status, second.status]).toEqual([202, 202]);
    const a = (await first.json()) as { turn: { id: string } };
    const b = (await second.json()) as { turn: { id: string } };
    expect(b.turn.id).toBe(a.turn.id);
    for await (const _ of chunks);
    expect((await turnRows(threadId)).length).toBe(2);
  });

  it('is an ordinary send when nothing runs, and refuses a bad mode, a stranger and a full queue', async () => {
    const threadId = await client.createThread();
    const idle = await steer(threadId, 'hello [[words:3]]');
    expect(idle.status).toBe(200);
    await readChunks(idle);

    const bad = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'x',
      mode: 'sideways',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('bad_request');

    const stranger = await ApiClient.signIn(client.baseUrl);
    const foreign = await stranger.fetch('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'let me in',
      mode: 'steer',
    });
    expect(foreign.status).toBe(404);

    const reply = await client.send(threadId, 'busy [[words:400]] [[delay:20]]');
    const chunks = iterateChunks(reply);
    await readUntil(chunks, (chunk) => chunk.type === 'text-delta');
    for (let index = 0; index < 4; index++) await client.queued(threadId, `queued ${index}`);
    expect((await steer(threadId, 'fifth, a steer')).status).toBe(202);
    const before = (await turnRows(threadId)).length;
    const full = await steer(threadId, 'sixth');
    expect(full.status).toBe(409);
    expect(((await full.json()) as { error: { code: string } }).error.code).toBe('queue_full');
    expect((await turnRows(threadId)).length).toBe(before);
    await client.fetch('POST', `/api/threads/${threadId}/interrupt`);
    for await (const _ of chunks);
  });
});
