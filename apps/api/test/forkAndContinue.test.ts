import type { ErrorBody, NewChatAnswer, Share, SharedSnapshot, ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import {
  chatWithDocuments,
  comparable,
  DOCUMENTS_READ,
  documentParts,
  lastReplyAgain,
  richChat,
} from './support/chatCopies';
import {
  APP_HEADERS,
  type ApiClient,
  readChunks,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { pngBytes, sendWithImages, uploaded } from './support/images';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

function fork(threadId: string, messageId: string, who: ApiClient = client) {
  return who.json<NewChatAnswer & ErrorBody>(
    'POST',
    `/api/threads/${threadId}/messages/${messageId}/fork`,
    {},
  );
}

function continueShare(token: string, who: ApiClient) {
  return who.json<NewChatAnswer & ErrorBody>('POST', `/api/shares/${token}/continue`, {});
}

/** Everything stored of a chat: its app rows and its branches' Mastra rows, to compare byte for byte. */
async function storedRows(threadId: string): Promise<unknown> {
  const { sql } = api.runtime.database;
  return {
    thread: await sql`select * from threads where id = ${threadId}`,
    branches: await sql`select * from branches where thread_id = ${threadId} order by id`,
    turns: await sql`select * from chat_turn_requests where thread_id = ${threadId} order by seq`,
    origins: await sql`select o.* from message_origins o join branches b on b.id = o.branch_id
      where b.thread_id = ${threadId} order by o.branch_id, o.message_id`,
    lineage:
      await sql`select * from message_lineage where thread_id = ${threadId} order by branch_id, message_id`,
    attachments: await sql`select * from attachments where thread_id = ${threadId} order by id`,
    feedback: await sql`select * from message_feedback where thread_id = ${threadId} order by message_id`,
    approvals: await sql`select * from hitl_requests where thread_id = ${threadId} order by id`,
    notes: await sql`select * from notes where thread_id = ${threadId} order by id`,
    shares: await sql`select * from shares where thread_id = ${threadId} order by token`,
    memory:
      await sql`select m.* from mastra.mastra_messages m join branches b on b.memory_thread_id = m.thread_id
      where b.thread_id = ${threadId} order by m.thread_id, m.id`,
    memoryThreads:
      await sql`select t.* from mastra.mastra_threads t join branches b on b.memory_thread_id = t.id
      where b.thread_id = ${threadId} order by t.id`,
  };
}

/** The original version of the rich chat, shown (it has the stopped reply and the tool calls). */
async function richChatOnOriginal(): Promise<{ threadId: string; detail: ThreadDetail }> {
  const threadId = await richChat(client);
  const edited = await client.detail(threadId);
  const original = edited.messages[0]?.metadata.version?.branchIds[0] as string;
  const switched = await client.json<ThreadDetail>('PUT', `/api/threads/${threadId}/active-branch`, {
    branchId: original,
  });
  return { threadId, detail: switched.body };
}

describe('New chat from here (P3)', () => {
  it('copies the shown version up to the message into a new chat with a link back, and only reads the source', async () => {
    const { threadId, detail } = await richChatOnOriginal();
    const stoppedAt = detail.messages.findIndex((message) => message.metadata.interrupted);
    const stopped = detail.messages[stoppedAt];
    const before = await storedRows(threadId);

    const { status, body } = await fork(threadId, stopped?.id as string);
    expect(status).toBe(201);
    expect(body.thread).toMatchObject({
      title: 'Copy of Trip planning',
      forkedFrom: { threadId, messageId: stopped?.id },
    });
    expect(await storedRows(threadId)).toEqual(before);

    const copy = await client.detail(body.thread.id);
    // The same messages up to the one picked, marks, images, feedback and approvals; no versions.
    const expected = {
      ...detail,
      messages: detail.messages.slice(0, stoppedAt + 1).map((message) => {
        const { version: _version, ...metadata } = message.metadata;
        return { ...message, metadata };
      }),
      notes: [],
    };
    expect(comparable([copy])).toEqual(comparable([expected]));
    expect(copy.messages.at(-1)?.metadata.interrupted).toBe(true);
    expect(copy.hitl.map((request) => request.status)).toEqual(['approved', 'denied']);
  });

  it('is independent of its source: a send in the copy changes nothing there, and deleting the source keeps the copy whole, images included', async () => {
    const { threadId, detail } = await richChatOnOriginal();
    const firstReply = detail.messages[1];
    const { body } = await fork(threadId, firstReply?.id as string);
    const forkId = body.thread.id;
    const before = await storedRows(threadId);

    const { chunks } = await client.sendAndRead(forkId, 'and in the copy? [[history]] [[words:4]]');
    expect(textOfChunks(chunks)).toContain('History: "look at this map"');
    expect(await storedRows(threadId)).toEqual(before);

    const image = (await client.detail(forkId)).messages[0]?.parts.find((part) => part.type === 'file');
    expect(image?.url).not.toBe(detail.messages[0]?.parts.find((part) => part.type === 'file')?.url);
    expect((await client.fetch('DELETE', `/api/threads/${threadId}`)).status).toBe(204);
    const after = await client.detail(forkId);
    expect(after.thread.forkedFrom).toBeUndefined();
    expect(after.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const media = await client.fetch('GET', String(image?.url));
    expect(media.status).toBe(200);
    expect(new Uint8Array(await media.arrayBuffer())).toEqual(pngBytes(64, 48));
  });

  it('keeps the documents: the copy has its own files and texts, which its model reads, and they outlive the source', async () => {
    const { threadId, pdf } = await chatWithDocuments(client);
    const source = await client.detail(threadId);
    const { status, body } = await fork(threadId, source.messages[1]?.id as string);
    expect(status).toBe(201);
    const forkId = body.thread.id;
    const copy = await client.detail(forkId);
    expect(documentParts(copy)).toEqual(documentParts(source));
    expect(documentParts(copy).length).toBe(2);
    const copiedIds = await api.runtime.database.sql<{ id: string; pages: number | null; words: number }[]>`
      select a.id, a.pages, a.words from attachments a join attachment_texts t on t.attachment_id = a.id
      where a.thread_id = ${forkId} order by a.name`;
    expect(copiedIds.map(({ pages, words }) => ({ pages, words }))).toEqual([
      { pages: null, words: 6 },
      { pages: 2, words: 5 },
    ]);
    expect(copiedIds.map(({ id }) => id)).not.toContain(pdf.id);

    expect((await client.fetch('DELETE', `/api/threads/${threadId}`)).status).toBe(204);
    const file = copy.messages[0]?.parts.find((part) => part.type === 'file');
    expect((await client.fetch('GET', String(file?.url))).status).toBe(200);
    expect(await lastReplyAgain(client, forkId)).toContain(DOCUMENTS_READ);
  });

  it('from a user message, answers it: the copy ends with that message, its image included, and a reply to it starts on the server', async () => {
    const threadId = await client.createThread('Questions');
    await client.sendAndRead(threadId, 'first question [[words:4]]');
    const image = await uploaded(client, threadId, pngBytes(20, 10), 'chart.png');
    await readChunks(await sendWithImages(client, threadId, 'look at this chart [[words:6]]', [image.id]));
    await client.sendAndRead(threadId, 'a later question [[words:4]]');
    const detail = await client.detail(threadId);
    const question = detail.messages[2];
    expect(textOfMessage(question)).toBe('look at this chart [[words:6]]');

    const { status, body } = await fork(threadId, question?.id as string);
    expect(status).toBe(201);
    // No page is open on the copy: the server runs the answer by itself.
    const copy = await waitFor(
      () => client.detail(body.thread.id),
      (read) => read.messages.length === 4 && read.turnQueue.activeTurn === null,
      20_000,
    );
    expect(copy.turnQueue.items).toEqual([]);
    expect(copy.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(copy.messages.slice(0, 3).map((message) => textOfMessage(message))).toEqual(
      detail.messages.slice(0, 3).map((message) => textOfMessage(message)),
    );
    const copiedImage = copy.messages[2]?.parts.find((part) => part.type === 'file');
    expect(copiedImage).toMatchObject({ mediaType: 'image/png', filename: 'chart.png' });
    expect(copiedImage?.url).not.toBe(`/api/media/${image.id}`);
    // The local model answers a message with images by what it received: the copied chart.
    expect(textOfMessage(copy.messages[3])).toBe('I see 1 image: png 20x10.');
    // The source is as it was.
    expect((await client.detail(threadId)).messages.length).toBe(6);
  });

  it('from an assistant message, runs nothing: the copy ends with that reply', async () => {
    const { threadId, detail } = await richChatOnOriginal();
    const reply = detail.messages[3];
    expect(reply?.role).toBe('assistant');
    const { body } = await fork(threadId, reply?.id as string);
    const copy = await client.detail(body.thread.id);
    expect(copy.turnQueue).toMatchObject({ activeTurn: null, items: [] });
    expect(copy.messages.map((message) => textOfMessage(message))).toEqual(
      detail.messages.slice(0, 4).map((message) => textOfMessage(message)),
    );
  });

  it('refuses someone else’s chat or message (404), and a message that is not final (409 thread_busy)', async () => {
    const threadId = await client.createThread('Mine');
    await client.sendAndRead(threadId, 'hello [[words:3]]');
    const [question] = (await client.detail(threadId)).messages;
    const stranger = await api.client();
    expect((await fork(threadId, question?.id as string, stranger)).body.error.code).toBe('not_found');
    expect((await fork(threadId, 'no-such-message')).status).toBe(404);
    const other = await client.createThread('Other');
    expect((await fork(other, question?.id as string)).status).toBe(404);

    // A failed attempt waits at the head (Q11): its messages are not final.
    const failing = await client.send(threadId, 'doomed [[fail-after:2]] [[words:6]]');
    await failing.text();
    const failed = (await client.detail(threadId)).messages.find((message) => message.metadata.failed);
    const refused = await fork(threadId, failed?.id as string);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'thread_busy', reason: 'not_settled' });
  });
});

describe('Continue a shared chat (P4)', () => {
  it('copies the snapshot into a new chat of a guest’s, images included; the owner’s chat is untouched and names no one', async () => {
    const threadId = await richChat(client);
    const { body: shareBody } = await client.json<{ share: Share }>(
      'POST',
      `/api/threads/${threadId}/shares`,
      {},
    );
    const { token } = shareBody.share;
    const snapshot = (await (await fetch(`${api.baseUrl}/api/shares/${token}`)).json()) as SharedSnapshot;
    const before = await storedRows(threadId);

    const guest = await api.client();
    const { status, body } = await continueShare(token, guest);
    expect(status).toBe(201);
    // Told apart from the shared chat (a reader may continue it twice, or own the original).
    expect(body.thread.title).toBe('Copy of Trip planning');
    expect(body.thread.forkedFrom).toBeUndefined();
    expect(await storedRows(threadId)).toEqual(before);

    const copy = await guest.detail(body.thread.id);
    expect(copy.messages.map((message) => ({ role: message.role, text: textOfMessage(message) }))).toEqual(
      snapshot.messages.map((message) => ({
        role: message.role,
        text: message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
      })),
    );
    const image = copy.messages[0]?.parts.find((part) => part.type === 'file');
    const media = await guest.fetch('GET', String(image?.url));
    expect(media.status).toBe(200);
    expect((await client.fetch('GET', String(image?.url))).status).toBe(404);

    // Nothing of the guest's is anywhere near the owner's chat.
    const guestId = (await guest.json<{ user: { id: string } }>('GET', '/api/auth/get-session')).body.user.id;
    expect(JSON.stringify(await storedRows(threadId))).not.toContain(guestId);
    const ownerId = (await client.json<{ user: { id: string } }>('GET', '/api/auth/get-session')).body.user
      .id;
    expect(JSON.stringify(await storedRows(body.thread.id))).not.toContain(ownerId);
    expect(JSON.stringify(await storedRows(body.thread.id))).not.toContain(threadId);
  });

  it('the copy is independent: it goes on by itself, and survives the share’s revoking and the chat’s deletion', async () => {
    const threadId = await client.createThread('Shared then gone');
    await client.sendAndRead(threadId, 'plan a picnic [[words:5]]');
    const { body: shareBody } = await client.json<{ share: Share }>(
      'POST',
      `/api/threads/${threadId}/shares`,
      {},
    );
    const guest = await api.client();
    const { body } = await continueShare(shareBody.share.token, guest);
    const { chunks } = await guest.sendAndRead(body.thread.id, 'with sandwiches [[history]] [[words:4]]');
    expect(textOfChunks(chunks)).toContain('History: "plan a picnic"');
    expect((await client.detail(threadId)).messages.length).toBe(2);

    expect((await client.fetch('DELETE', `/api/shares/${shareBody.share.token}`)).status).toBe(204);
    expect((await client.fetch('DELETE', `/api/threads/${threadId}`)).status).toBe(204);
    expect((await guest.detail(body.thread.id)).messages.length).toBe(4);
  });

  it('refuses a revoked or unknown link (404), and a caller without a session (401)', async () => {
    const threadId = await client.createThread('Short-lived');
    await client.sendAndRead(threadId, 'hi [[words:2]]');
    const { body: shareBody } = await client.json<{ share: Share }>(
      'POST',
      `/api/threads/${threadId}/shares`,
      {},
    );
    const { token } = shareBody.share;
    const anonymous = await fetch(`${api.baseUrl}/api/shares/${token}/continue`, {
      method: 'POST',
      headers: APP_HEADERS,
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
    await client.fetch('DELETE', `/api/shares/${token}`);
    const guest = await api.client();
    expect((await continueShare(token, guest)).body.error.code).toBe('not_found');
    expect((await continueShare('not-a-token-at-all-0000', guest)).status).toBe(404);
  });
});
