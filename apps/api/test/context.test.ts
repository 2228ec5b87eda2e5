import type { ChatMessage, CompactAnswer, ThreadDetail } from '@chat/contracts';
import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { countStoredParts, countTextTokens } from '../src/agent/tokenCount';
import { transcriptTables } from '../src/chats/transcript/tables';
import {
  type ApiClient,
  readChunks,
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

const ENCODING = 'local_words';
/** The local model's window (CHAT_CONTEXT_WINDOW unset) and the default threshold. */
const WINDOW = 8_000;
const THRESHOLD = 0.8 * WINDOW;

async function rootBranch(threadId: string) {
  const [branch] = await api.runtime.database.db
    .select()
    .from(schema.branches)
    .where(eq(schema.branches.threadId, threadId));
  if (!branch) throw new Error('no branch');
  return branch;
}

/**
 * Grows a chat through the database (not hundreds of sends): `pairs` exchanges of a numbered
 * question and a long answer, written into the branch's memory as a turn would leave them, after
 * everything already there. `question(index)` lets a test put a directive in one of them.
 */
async function growChat(threadId: string, pairs: number, question = (index: number) => `question ${index}`) {
  const branch = await rootBranch(threadId);
  const [owner] = await api.runtime.database.db
    .select({ ownerId: schema.threads.ownerId })
    .from(schema.threads)
    .where(eq(schema.threads.id, threadId));
  const answer = Array.from({ length: 30 }, (_, word) => `answer${word}`).join(' ');
  const start = Date.now() - 60_000;
  const messages = Array.from({ length: pairs }, (_, index) => [
    { role: 'user' as const, text: question(index) },
    { role: 'assistant' as const, text: `${answer} for ${index}` },
  ])
    .flat()
    .map((message, index) => ({
      id: crypto.randomUUID(),
      threadId: branch.memoryThreadId,
      resourceId: owner?.ownerId ?? '',
      role: message.role,
      content: JSON.stringify({ format: 2, parts: [{ type: 'text', text: message.text }] }),
      createdAt: new Date(start + index * 10),
    }));
  await transcriptTables.insertMessages(api.runtime.database.db, messages);
  return messages;
}

function compactionEvents(chunks: StreamChunk[]) {
  return chunks.filter((chunk) => chunk.type === 'data-compaction').map((chunk) => chunk.data);
}

function markerOf(detail: ThreadDetail): ChatMessage | undefined {
  return detail.messages.find((message) => message.metadata.compaction);
}

describe('token usage per reply (C1)', () => {
  it('records the usage the model reports with the reply, in the detail and the settle event', async () => {
    const threadId = await client.createThread();
    const before = (await client.detail(threadId)).context;
    const text = 'how big is this [[words:7]]';
    const { chunks } = await client.sendAndRead(threadId, text);
    const detail = await client.detail(threadId);
    const reply = detail.messages.at(-1);
    expect(reply?.role).toBe('assistant');
    // The local model counts its prompt like the meter: what the meter showed plus the new message.
    const incoming = countStoredParts([{ type: 'text', text }], ENCODING);
    expect(reply?.metadata.usage).toEqual({
      inputTokens: before.used + incoming,
      outputTokens: countTextTokens(textOfChunks(chunks), ENCODING),
    });
    const [row] = await api.runtime.database.db
      .select({ usage: schema.chatTurnRequests.usage })
      .from(schema.chatTurnRequests)
      .where(eq(schema.chatTurnRequests.threadId, threadId));
    expect(row?.usage).toEqual(reply?.metadata.usage);
  });
});

describe('the context meter (C2)', () => {
  it("shows the next call's fill from stored counts, each message counted once", async () => {
    const threadId = await client.createThread();
    const empty = (await client.detail(threadId)).context;
    expect(empty).toMatchObject({ window: WINDOW, compactAt: 0.8, marker: null });
    expect(empty.used).toBeGreaterThan(0); // the instructions
    await client.sendAndRead(threadId, 'first [[words:5]]');
    const after = (await client.detail(threadId)).context;
    const counts = await api.runtime.database.db
      .select()
      .from(schema.messageTokenCounts)
      .where(eq(schema.messageTokenCounts.threadId, threadId));
    expect(counts).toHaveLength(2);
    expect(after.used).toBe(empty.used + counts.reduce((sum, row) => sum + row.tokens, 0));
    // The meter is read from the stored counts: change one, and the figure follows.
    await api.runtime.database.db
      .update(schema.messageTokenCounts)
      .set({ tokens: 1_000 })
      .where(eq(schema.messageTokenCounts.messageId, counts[0]?.messageId ?? ''));
    const changed = (await client.detail(threadId)).context;
    expect(changed.used).toBe(after.used - (counts[0]?.tokens ?? 0) + 1_000);
  });
});

describe("a settle counts its reply's messages (C2)", () => {
  it('stores their counts with the settle, the ones a measure would make of them', async () => {
    const threadId = await client.createThread();
    const { turnId } = await client.sendAndRead(threadId, 'counted at the settle [[words:7]]');
    const db = api.runtime.database.db;
    const settled = async () =>
      (await db.select().from(schema.chatTurnRequests).where(eq(schema.chatTurnRequests.id, turnId)))[0];
    await waitFor(settled, (row) => row?.status === 'completed');
    // Nothing has measured the window since (no detail, no event stream, no next turn).
    const counts = await db
      .select()
      .from(schema.messageTokenCounts)
      .where(eq(schema.messageTokenCounts.threadId, threadId));
    expect(counts).toHaveLength(2);
    const branch = await rootBranch(threadId);
    const stored = await transcriptTables.readModelWindow(db, {
      threadId,
      branch,
      start: null,
      encoding: ENCODING,
    });
    expect(stored).toHaveLength(2);
    expect(Object.fromEntries(counts.map((row) => [row.messageId, row.tokens]))).toEqual(
      Object.fromEntries(
        stored.map((message) => [message.id, countStoredParts(message.content.parts as never, ENCODING)]),
      ),
    );
  });
});

describe('compaction (C3)', () => {
  it('summarizes the older part once past the threshold; the model gets summary + recent; nothing is deleted', async () => {
    const threadId = await client.createThread();
    const grown = await growChat(threadId, 100);
    const before = await client.detail(threadId);
    expect(before.context.used).toBeGreaterThan(THRESHOLD);
    expect(markerOf(before)).toBeUndefined();

    const { chunks } = await client.sendAndRead(threadId, 'what do you remember? [[history]] [[words:5]]');
    expect(compactionEvents(chunks)).toEqual([{ status: 'compacting' }, { status: 'done' }]);
    const reply = textOfChunks(chunks);
    expect(reply).toMatch(/Summary: "Summary of \d+ messages\. The person said: .*"question \d+"/);
    // Recent questions whole, the oldest only in the summary.
    expect(reply).toContain('"question 99"');
    expect(reply.split('Summary:')[1]?.split('History:')[1]).not.toContain('"question 0"');

    const detail = await client.detail(threadId);
    const marked = markerOf(detail);
    expect(marked?.metadata.compaction).toMatchObject({ kind: 'summary', error: null });
    expect(marked?.metadata.compaction?.summary).toMatch(/^Summary of \d+ messages/);
    expect(detail.context.marker?.messageId).toBe(marked?.id);
    expect(detail.context.used).toBeLessThan(THRESHOLD);
    // Every original message is still in the transcript.
    const shown = new Set(detail.messages.map((message) => message.id));
    expect(grown.every((message) => shown.has(message.id))).toBe(true);

    // The next turn does not compact again, and its history starts at the marker.
    const next = await client.sendAndRead(threadId, 'and now? [[history]] [[words:5]]');
    expect(compactionEvents(next.chunks)).toEqual([]);
    const markers = await api.runtime.database.db
      .select()
      .from(schema.contextMarkers)
      .where(eq(schema.contextMarkers.threadId, threadId));
    expect(markers).toHaveLength(1);
    const firstSeen = textOfMessage(marked);
    expect(textOfChunks(next.chunks)).toContain(`History: "${firstSeen}"`);
  });

  it('summarizes a part longer than the window in pieces, each summary carried into the next', async () => {
    const threadId = await client.createThread();
    await growChat(threadId, 300);
    expect((await client.detail(threadId)).context.used).toBeGreaterThan(2 * WINDOW);
    const { chunks } = await client.sendAndRead(threadId, 'after a long time [[history]] [[words:5]]');
    expect(compactionEvents(chunks)).toEqual([{ status: 'compacting' }, { status: 'done' }]);
    const detail = await client.detail(threadId);
    const summary = markerOf(detail)?.metadata.compaction?.summary ?? '';
    // The last piece's summary starts with the one before it, which started with the one before.
    expect(summary).toMatch(/^Before that: Before that: /);
    expect(detail.context.used).toBeLessThan(THRESHOLD);
    expect(detail.messages).toHaveLength(602);
  });

  it('falls back to the newest messages that fit when the summary fails, and says so on the marker', async () => {
    const threadId = await client.createThread();
    await growChat(threadId, 100, (index) =>
      index === 3 ? 'question 3 [[fail-summary]]' : `question ${index}`,
    );
    const { chunks } = await client.sendAndRead(threadId, 'still there? [[history]] [[words:5]]');
    const events = compactionEvents(chunks);
    expect(events[0]).toEqual({ status: 'compacting' });
    expect(events[1]).toMatchObject({ status: 'failed', error: expect.stringContaining('[[fail-summary]]') });
    const reply = textOfChunks(chunks);
    expect(reply).not.toContain('Summary:');
    expect(reply).toContain('"question 99"');
    expect(reply).not.toContain('"question 0"');
    const detail = await client.detail(threadId);
    expect(markerOf(detail)?.metadata.compaction).toMatchObject({ kind: 'cut', summary: null });
    expect(markerOf(detail)?.metadata.compaction?.error).toContain('[[fail-summary]]');
    expect(detail.context.used).toBeLessThan(WINDOW);
  });

  it('is per branch: a version made from an earlier message has its own window', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'the first question [[words:5]]');
    await growChat(threadId, 100);
    await client.sendAndRead(threadId, 'compact me [[words:5]]');
    const compacted = await client.detail(threadId);
    expect(compacted.context.marker?.kind).toBe('summary');
    const first = compacted.messages[0];
    const edited = await client.fetch('POST', `/api/threads/${threadId}/messages/${first?.id}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text: 'a new first question [[history]] [[words:5]]',
    });
    expect(edited.status).toBe(200);
    const reply = textOfChunks(await readChunks(edited));
    expect(reply).toContain('History: (none)');
    expect(reply).not.toContain('Summary:');
    const version = await client.detail(threadId);
    expect(version.thread.activeBranchId).not.toBe(compacted.thread.activeBranchId);
    expect(version.context.marker).toBeNull();
    expect(markerOf(version)).toBeUndefined();
  });

  it('Compact now summarizes at once; refuses while a reply runs and for a chat that is not yours', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'one [[words:300]] [[delay:0]]');
    await client.sendAndRead(threadId, 'two [[words:300]] [[delay:0]]');
    const before = (await client.detail(threadId)).context;
    const compacted = await client.json<CompactAnswer>('POST', `/api/threads/${threadId}/compact`);
    expect(compacted.status).toBe(200);
    expect(compacted.body.marker).toMatchObject({ kind: 'summary', error: null });
    expect(compacted.body.context.marker?.id).toBe(compacted.body.marker?.id);
    expect(compacted.body.context.used).toBeLessThan(before.used);
    const detail = await client.detail(threadId);
    expect(markerOf(detail)?.metadata.compaction?.summary).toContain('"one"');
    // A share holds neither the marker nor the summary, nor a reply's usage.
    const shared = await client.json<{ share: { token: string } }>('POST', `/api/threads/${threadId}/shares`);
    expect(shared.status).toBe(201);
    const snapshot = await client.fetch('GET', `/api/shares/${shared.body.share.token}`);
    const text = await snapshot.text();
    expect(text).toContain('"one');
    expect(text).not.toMatch(/compaction|Summary of|inputTokens/);

    const running = await client.send(threadId, 'long one [[words:400]] [[delay:20]]');
    expect(running.status).toBe(200);
    const busy = await client.json<{ error: { code: string; reason: string } }>(
      'POST',
      `/api/threads/${threadId}/compact`,
    );
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 'thread_busy', reason: 'reply_running' });
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await running.body?.cancel();

    const stranger = await api.client();
    const foreign = await stranger.json<{ error: { code: string } }>(
      'POST',
      `/api/threads/${threadId}/compact`,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const unknown = await client.json<{ error: { code: string } }>(
      'POST',
      `/api/threads/${crypto.randomUUID()}/compact`,
    );
    expect(unknown.status).toBe(404);
  });
});
