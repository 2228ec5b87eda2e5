import type { ChatMessage, ThreadDetail } from '@chat/contracts';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, readUntilWords, waitFor } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * The thread detail's transcript cache (ADR-051) never answers from a stale copy: one instance
 * keeps the cache (`cached`), another on the same database has it off (`reference`, the answer
 * without the cache). After every kind of change, made through the other instance or straight in
 * the database as another process would, both answer byte for byte the same, twice in a row (the
 * first detail may fill the cache, the second reads from it).
 */
let database: TestDatabase;
let cached: TestApi;
let reference: TestApi;
let viaCached: ApiClient;
let viaReference: ApiClient;

beforeAll(async () => {
  database = await freshDatabase();
  [cached, reference] = await Promise.all([
    startTestApi(database.url),
    startTestApi(database.url, { DETAIL_CACHE_MB: '0' }),
  ]);
  viaCached = await cached.client();
  viaReference = viaCached.via(reference.baseUrl);
});

afterAll(async () => {
  await Promise.all([cached?.close(), reference?.close()]);
  await database?.drop();
});

const turn = (label: string) => `${label} [[words:4]] [[delay:0]]`;

async function detailText(client: ApiClient, threadId: string): Promise<string> {
  const response = await client.fetch('GET', `/api/threads/${threadId}`);
  expect(response.status).toBe(200);
  return await response.text();
}

/** The cached instance answers as the one without a cache, twice; returns the answer. */
async function expectFresh(threadId: string): Promise<ThreadDetail> {
  let answer = '';
  for (let round = 0; round < 2; round += 1) {
    answer = await detailText(viaCached, threadId);
    expect(answer).toBe(await detailText(viaReference, threadId));
  }
  return JSON.parse(answer) as ThreadDetail;
}

async function grow(threadId: string, turns: number, via = viaReference): Promise<void> {
  for (let index = 0; index < turns; index += 1)
    await via.sendAndRead(threadId, turn(`Message ${index + 1}.`));
}

const users = (detail: ThreadDetail) => detail.messages.filter((message) => message.role === 'user');
const replies = (detail: ThreadDetail) => detail.messages.filter((message) => message.role === 'assistant');

async function memoryThreadOf(branchId: string): Promise<string> {
  const [row] = await cached.runtime.database.sql<{ memory_thread_id: string }[]>`
    select memory_thread_id from branches where id = ${branchId}`;
  return row?.memory_thread_id as string;
}

describe('thread detail with the transcript cache', () => {
  it('shows messages another instance appended', async () => {
    const threadId = await viaCached.createThread();
    await grow(threadId, 4);
    await expectFresh(threadId);
    await grow(threadId, 3);
    const detail = await expectFresh(threadId);
    expect(detail.messages).toHaveLength(14);
  });

  it('shows an old message another process rewrote or deleted in the database', async () => {
    const threadId = await viaCached.createThread();
    await grow(threadId, 5);
    const before = await expectFresh(threadId);
    const memoryThreadId = await memoryThreadOf(before.thread.activeBranchId);
    const { sql } = cached.runtime.database;
    // Any write of a cached row (a tool call closed, a repair, an account move) is such a rewrite.
    const first = users(before)[0] as ChatMessage;
    await sql`
      update mastra.mastra_messages
      set content = jsonb_set(content::jsonb, '{parts,0,text}', '"Rewritten elsewhere."')::text
      where id = ${first.id} and thread_id = ${memoryThreadId}`;
    const rewritten = await expectFresh(threadId);
    expect(rewritten.messages[0]?.parts).toEqual([{ type: 'text', text: 'Rewritten elsewhere.' }]);
    // Deleted, and a message written in its place with the same time (the count alone would not see it).
    const second = replies(before)[1] as ChatMessage;
    await sql`delete from mastra.mastra_messages where id = ${second.id} and thread_id = ${memoryThreadId}`;
    const deleted = await expectFresh(threadId);
    expect(deleted.messages.map((message) => message.id)).not.toContain(second.id);
    expect(deleted.messages).toHaveLength(9);
    // A turn's row changed with no message changing (what its reply's marks are read from).
    const reply = replies(deleted)[0] as ChatMessage;
    await sql`update chat_turn_requests set model = 'changed-elsewhere' where thread_id = ${threadId}
      and assistant_message_id = ${reply.id}`;
    const remarked = await expectFresh(threadId);
    expect(remarked.messages.find((message) => message.id === reply.id)?.metadata?.model).toBe(
      'changed-elsewhere',
    );
  });

  it('shows a reply streamed while it was read, then settled, and a stopped one as interrupted', async () => {
    const threadId = await viaCached.createThread();
    await grow(threadId, 3);
    await expectFresh(threadId);
    const streaming = await viaReference.send(threadId, 'A long reply [[words:300]] [[delay:5]]');
    expect(streaming.status).toBe(200);
    await readUntilWords(streaming, 20);
    // Read (and cached) while it streams and is checkpointed.
    for (let index = 0; index < 3; index += 1) await detailText(viaCached, threadId);
    await readChunks(streaming);
    await waitFor(
      () => viaReference.detail(threadId),
      (detail) => detail.turnQueue.activeTurn === null && detail.turnQueue.items.length === 0,
    );
    const settled = await expectFresh(threadId);
    expect(settled.messages).toHaveLength(8);

    const stopped = await viaReference.send(threadId, 'Stopped [[words:400]] [[delay:20]]');
    await readUntilWords(stopped, 10);
    await detailText(viaCached, threadId);
    expect((await viaReference.fetch('POST', `/api/threads/${threadId}/interrupt`)).status).toBe(200);
    await stopped.body?.cancel();
    await waitFor(
      () => viaReference.detail(threadId),
      (detail) => detail.turnQueue.activeTurn === null,
    );
    const interrupted = await expectFresh(threadId);
    expect(interrupted.messages.at(-1)?.metadata?.interrupted).toBe(true);
  });

  it('shows versions, switches and feedback made through the other instance', async () => {
    const threadId = await viaCached.createThread();
    await grow(threadId, 5);
    const root = await expectFresh(threadId);
    const edited = users(root)[2] as ChatMessage;
    const version = await viaReference.fetch(
      'POST',
      `/api/threads/${threadId}/messages/${edited.id}/versions`,
      {
        clientRequestId: crypto.randomUUID(),
        text: turn('Message 3, second version.'),
      },
    );
    expect(version.status).toBe(200);
    await readChunks(version);
    const second = await expectFresh(threadId);
    expect(second.thread.activeBranchId).not.toBe(root.thread.activeBranchId);
    // Back to the version the cache holds: its messages now have versions.
    const back = await viaReference.fetch('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId: root.thread.activeBranchId,
    });
    expect(back.status).toBe(200);
    await back.arrayBuffer();
    const again = await expectFresh(threadId);
    expect(again.messages.find((message) => message.id === edited.id)?.metadata?.version?.count).toBe(2);

    const rated = replies(again)[0] as ChatMessage;
    for (const rating of ['up', 'down'] as const) {
      const response = await viaReference.fetch(
        'PUT',
        `/api/threads/${threadId}/messages/${rated.id}/feedback`,
        { rating },
      );
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      const withRating = await expectFresh(threadId);
      expect(withRating.messages.find((message) => message.id === rated.id)?.metadata?.feedback).toEqual({
        rating,
      });
    }

    // The latest turn deleted through the other instance.
    const latest = users(again).at(-1) as ChatMessage;
    const deleted = await viaReference.fetch('DELETE', `/api/threads/${threadId}/messages/${latest.id}`);
    expect(deleted.status).toBe(200);
    await deleted.arrayBuffer();
    expect((await expectFresh(threadId)).messages).toHaveLength(again.messages.length - 2);
  });

  it('answers 404 for a deleted chat and shows its import as the other instance does', async () => {
    const threadId = await viaCached.createThread();
    await grow(threadId, 4);
    await expectFresh(threadId);
    const exported = await viaReference.fetch('GET', `/api/threads/${threadId}/export?format=json`);
    const document = JSON.parse(await exported.text()) as unknown;
    expect((await viaReference.fetch('DELETE', `/api/threads/${threadId}`)).status).toBeLessThan(300);
    const gone = await viaCached.fetch('GET', `/api/threads/${threadId}`);
    expect(gone.status).toBe(404);
    await gone.arrayBuffer();

    const imported = await viaReference.json<{ thread: { id: string } }>('POST', '/api/imports', document);
    expect(imported.status).toBe(201);
    const detail = await expectFresh(imported.body.thread.id);
    expect(detail.messages).toHaveLength(8);
    // Grown after the import through the other instance.
    await grow(imported.body.thread.id, 1);
    expect((await expectFresh(imported.body.thread.id)).messages).toHaveLength(10);
  });
});
