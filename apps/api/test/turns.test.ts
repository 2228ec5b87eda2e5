import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ensureTurnStored } from '../src/chats/branches/transcript';
import { API_SECURITY_HEADERS } from '../src/platform/securityHeaders';
import {
  type ApiClient,
  readChunks,
  readUntilWords,
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

const wordsOf = (text: string) => text.trim().split(/\s+/).length;

async function turnRows(threadId: string) {
  return await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
}

describe('a send names its steps in Server-Timing', () => {
  /** `name;dur=ms` entries of the header, by name. */
  const steps = (response: Response) =>
    new Map(
      (response.headers.get('server-timing') ?? '')
        .split(',')
        .map((entry) => /^\s*([a-z]+);dur=([0-9.]+)\s*$/.exec(entry))
        .filter((match) => match !== null)
        .map((match) => [match[1], Number(match[2])] as const),
    );

  it('a send that runs: body, wait (for a start slot), auth, accept, claim, start and the total, each a duration', async () => {
    const threadId = await client.createThread();
    const response = await client.send(threadId, 'Timed [[words:3]]');
    expect(response.status).toBe(200);
    const timing = steps(response);
    expect([...timing.keys()]).toEqual(['body', 'wait', 'auth', 'accept', 'claim', 'start', 'total']);
    const parts = [...timing].filter(([name]) => name !== 'total').map(([, ms]) => ms);
    // The steps follow one another inside the request: together they fit in its total.
    expect(parts.reduce((sum, ms) => sum + ms, 0)).toBeLessThanOrEqual((timing.get('total') ?? 0) + 0.5);
    await readChunks(response);
  });

  it('a send that waits: accept and the queue read back instead of claim and start', async () => {
    const threadId = await client.createThread();
    const running = await client.send(threadId, 'Long [[words:200]] [[delay:20]]');
    await readUntilWords(running, 1);
    const queued = await client.send(threadId, 'Then this');
    expect(queued.status).toBe(202);
    expect([...steps(queued).keys()]).toEqual(['body', 'wait', 'auth', 'accept', 'queue', 'total']);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });
});

describe('a send on an idle thread (Q1, Q2)', () => {
  it('streams the reply as an AI SDK UI message stream and persists both messages in memory', async () => {
    const threadId = await client.createThread();
    const response = await client.send(threadId, 'Tell me about tides [[words:12]]');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    // The headers every API answer carries come with the stream too (it is written straight to
    // the socket, not through the response h3 would build).
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS))
      expect(response.headers.get(name), name).toBe(value);
    expect(response.headers.get('server-timing')).toContain('total;dur=');
    const turnId = response.headers.get('x-turn-id');
    expect(turnId).toMatch(/^[0-9a-f-]{36}$/);

    const chunks = await readChunks(response);
    expect(chunks[0]?.type).toBe('start');
    expect(chunks.at(-1)?.type).toBe('finish');
    const streamed = textOfChunks(chunks);
    expect(streamed.startsWith('You said: "Tell me about tides".')).toBe(true);
    expect(wordsOf(streamed)).toBe(12);

    const detail = await client.detail(threadId);
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(textOfMessage(detail.messages[0])).toBe('Tell me about tides [[words:12]]');
    expect(textOfMessage(detail.messages[1])).toBe(streamed);
    expect(detail.messages[1]?.id).toBe(chunks[0]?.messageId);
    expect(detail.messages.map((message) => message.metadata.turnId)).toEqual([turnId, turnId]);
    expect(detail.turnQueue).toEqual({ activeTurn: null, items: [], paused: false });

    // Thread detail reads Mastra memory, the canonical transcript (O1).
    const branch = detail.thread.activeBranchId;
    const stored = await api.runtime.transcript.recall(branch);
    expect(stored).toHaveLength(2);

    const [row] = await turnRows(threadId);
    expect(row?.id).toBe(turnId);
    expect(row?.status).toBe('completed');
    expect(row?.finishedAt).not.toBeNull();
  });

  it('has the turn settled whole when its stream ends: reply, lineage and counts stored, the next send starts', async () => {
    // The reply is stored in the settle's own transaction (ADR-057): nothing of it may come after
    // the stream's end, and the user message's lineage row reads the message the settle wrote.
    const threadId = await client.createThread();
    for (const label of ['First', 'Second']) {
      const response = await client.send(threadId, `${label} [[words:20]] [[delay:0]]`);
      expect(response.status).toBe(200);
      const chunks = await readChunks(response);
      expect(chunks.at(-1)?.type).toBe('finish');
      // Read before the detail, which would repair a missing lineage row and count what is uncounted.
      const { db } = api.runtime.database;
      const lineage = await db
        .select()
        .from(schema.messageLineage)
        .where(eq(schema.messageLineage.threadId, threadId));
      const counted = await db
        .select()
        .from(schema.messageTokenCounts)
        .where(eq(schema.messageTokenCounts.threadId, threadId));
      const detail = await client.detail(threadId);
      expect(detail.turnQueue.activeTurn).toBeNull();
      const last = detail.messages.at(-1);
      expect(last?.id).toBe(chunks[0]?.messageId);
      expect(textOfMessage(last)).toBe(textOfChunks(chunks));
      const user = detail.messages.at(-2);
      expect(lineage.map((row) => row.messageId)).toContain(user?.id);
      expect(counted.map((row) => row.messageId)).toEqual(expect.arrayContaining([user?.id, last?.id]));
    }
    const rows = await turnRows(threadId);
    expect(rows.map((row) => row.status)).toEqual(['completed', 'completed']);
  });

  it('returns every message of a long conversation, not just the last page', async () => {
    const threadId = await client.createThread();
    for (let i = 0; i < 12; i += 1)
      await client.sendAndRead(threadId, `message ${i} [[words:2]] [[delay:0]]`);
    const detail = await client.detail(threadId);
    expect(detail.messages).toHaveLength(24);
    expect(textOfMessage(detail.messages[0])).toBe('message 0 [[words:2]] [[delay:0]]');
  });

  it('never creates a second turn for a retried clientRequestId (Q1)', async () => {
    const threadId = await client.createThread();
    const first = await client.send(threadId, 'once [[words:3]]', 'retry-me');
    await readChunks(first);
    const retry = await client.send(threadId, 'once [[words:3]]', 'retry-me');
    expect(retry.status).toBe(202);
    const body = (await retry.json()) as { turn: { id: string; status: string } };
    expect(body.turn.id).toBe(first.headers.get('x-turn-id'));
    expect(body.turn.status).toBe('completed');
    expect(await turnRows(threadId)).toHaveLength(1);
    expect((await client.detail(threadId)).messages).toHaveLength(2);
  });

  it('keeps running when the client disconnects: closing the tab is not an interrupt (S1)', async () => {
    const threadId = await client.createThread();
    const response = await client.send(threadId, 'keep going [[words:30]] [[delay:15]]');
    const seen = await readUntilWords(response, 4);
    expect(wordsOf(seen)).toBeLessThan(30);
    const detail = await waitFor(
      () => client.detail(threadId),
      (d) => d.turnQueue.activeTurn === null,
    );
    const reply = detail.messages[1];
    expect(wordsOf(textOfMessage(reply))).toBe(30);
    expect(reply?.metadata.interrupted).toBeUndefined();
    expect((await turnRows(threadId))[0]?.status).toBe('completed');
  });

  it('lets a reload attach to a running turn: what streamed so far, then live; 204 once finished', async () => {
    const threadId = await client.createThread();
    const sender = await client.send(threadId, 'attach to me [[words:25]] [[delay:20]]');
    const turnId = sender.headers.get('x-turn-id');
    await readUntilWords(sender, 5);
    const attached = await client.fetch('GET', `/api/threads/${threadId}/turns/${turnId}/stream`);
    expect(attached.status).toBe(200);
    expect(attached.headers.get('x-turn-id')).toBe(turnId);
    const chunks = await readChunks(attached);
    expect(chunks[0]?.type).toBe('start');
    const text = textOfChunks(chunks);
    expect(text.startsWith('You said: "attach to me".')).toBe(true);
    expect(wordsOf(text)).toBe(25);

    const after = await client.fetch('GET', `/api/threads/${threadId}/turns/${turnId}/stream`);
    expect(after.status).toBe(204);
  });
});

describe('failures', () => {
  it('puts a turn that fails before any text back at the queue head as failed (Q11)', async () => {
    const threadId = await client.createThread();
    const response = await client.send(threadId, 'break [[fail]]');
    expect(response.status).toBe(200);
    const chunks = await readChunks(response);
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(true);

    // The attempt stays visible: the user's message, marked failed with the error (no reply).
    const detail = await client.detail(threadId);
    expect(detail.messages.map((message) => textOfMessage(message))).toEqual(['break [[fail]]']);
    expect(detail.messages[0]?.metadata).toMatchObject({
      failed: true,
      error: expect.stringMatching(/fail/i),
    });
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.turnQueue.items).toHaveLength(1);
    expect(detail.turnQueue.items[0]).toMatchObject({ status: 'failed', text: 'break [[fail]]' });
    expect(detail.turnQueue.items[0]?.error).toMatch(/fail/i);

    // It blocks the queue: a new send waits behind it, and nothing can be claimed.
    const queued = await client.queued(threadId, 'next one [[words:3]]');
    expect(queued.status).toBe('queued');
    const claim = await client.json<{ error: { code: string; reason: string } }>(
      'POST',
      `/api/threads/${threadId}/queue/claim`,
    );
    expect(claim.status).toBe(409);
    expect(claim.body.error).toMatchObject({ code: 'not_eligible', reason: 'head_failed' });
  });

  it('keeps a turn that fails after some text failed at the head, its partial reply marked failed (Q11)', async () => {
    const threadId = await client.createThread();
    const { turnId, chunks } = await client.sendAndRead(threadId, 'half [[fail-after:4]]');
    expect(wordsOf(textOfChunks(chunks))).toBe(4);
    const detail = await client.detail(threadId);
    expect(detail.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(wordsOf(textOfMessage(detail.messages[1]))).toBe(4);
    expect(detail.messages[1]?.metadata).toMatchObject({
      failed: true,
      error: expect.stringMatching(/fail/i),
    });
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.turnQueue.paused).toBe(false);
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual([[turnId, 'failed']]);
    expect((await turnRows(threadId))[0]?.status).toBe('failed');
    // A new send waits behind it.
    expect((await client.queued(threadId, 'next')).status).toBe('queued');
  });

  it('counts the length limit in characters: 32,000 emoji are accepted like 32,000 letters', async () => {
    const threadId = await client.createThread();
    const emoji = '\u{1F600}'.repeat(32_000);
    expect(emoji.length).toBe(64_000);
    const accepted = await client.send(threadId, emoji);
    expect(accepted.status).toBe(200);
    await readChunks(accepted);
    const refused = await client.json<{ error: { code: string } }>('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: 'one-more',
      text: `${emoji}x`,
    });
    expect([refused.status, refused.body.error.code]).toEqual([413, 'too_large']);
    expect(await turnRows(threadId)).toHaveLength(1);
  });
});

describe("the order of a branch's messages", () => {
  it('stores a turn and returns only once the clock has passed its newest message, so the next turn sorts after it', async () => {
    const memory = api.runtime.chatAgent.memory;
    const threadId = crypto.randomUUID();
    const resourceId = 'order-owner';
    const base = { threadId, resourceId };
    await memory.saveThread({
      thread: {
        id: threadId,
        resourceId,
        title: '',
        createdAt: new Date(),
        updatedAt: new Date(),
        metadata: {},
      },
    });
    const userId = crypto.randomUUID();
    const replyId = crypto.randomUUID();
    // A reply stamped ahead of the clock, as Mastra stamps messages made within one millisecond.
    const ahead = new Date(Date.now() + 80);
    await ensureTurnStored(api.runtime.transcript, api.runtime.database.db, {
      memoryThreadId: threadId,
      resourceId,
      userMessage: { id: userId, text: 'First', createdAt: new Date() },
      messages: [
        {
          id: replyId,
          role: 'assistant',
          createdAt: ahead.toISOString(),
          parts: [{ type: 'text', text: 'Reply' }],
        },
      ],
    });
    // The next turn's message, stamped as Mastra stamps it: with the time it is made.
    const nextId = crypto.randomUUID();
    const next = new Date();
    expect(next.getTime()).toBeGreaterThan(ahead.getTime());
    await memory.saveMessages({
      messages: [
        {
          ...base,
          id: nextId,
          role: 'user',
          createdAt: next,
          content: { format: 2, parts: [{ type: 'text', text: 'Next' }] },
        },
      ],
    });
    const order = (await api.runtime.transcript.recall(threadId)).map((message) => message.id);
    expect(order).toEqual([userId, replyId, nextId]);
  });
});
