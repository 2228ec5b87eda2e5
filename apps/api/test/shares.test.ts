import type { ErrorBody, Share, SharedSnapshot, ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { HANDOFF_INSTRUCTION } from '../src/agent/handoffInstruction';
import { chatWithDocuments, DOCUMENTS_READ, documentParts, lastReplyAgain } from './support/chatCopies';
import {
  APP_HEADERS,
  type ApiClient,
  iterateChunks,
  readChunks,
  readUntilWords,
  textOfChunks,
  textOfMessage,
} from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const SLOW = '[[words:400]] [[delay:25]]';

async function share(threadId: string): Promise<Share> {
  const { status, body } = await client.json<{ share: Share }>('POST', `/api/threads/${threadId}/shares`, {});
  expect(status).toBe(201);
  return body.share;
}

/** The public read, as a stranger: no cookie at all. Returns the raw text too. */
async function readShared(token: string): Promise<{ status: number; raw: string; headers: Headers }> {
  const response = await fetch(`${api.baseUrl}/api/shares/${token}`);
  return { status: response.status, raw: await response.text(), headers: response.headers };
}

async function owner(who: ApiClient = client): Promise<{ id: string; email: string }> {
  const { body } = await who.json<{ user: { id: string; email: string } }>('GET', '/api/auth/get-session');
  return body.user;
}

/** Every object key anywhere in a JSON value. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      keysOf(inner, into);
    }
  }
  return into;
}

/** Asserts the raw snapshot holds only allow-listed fields and none of the given secrets. */
function expectSanitized(raw: string, secrets: string[]): void {
  for (const secret of secrets) expect(raw, `snapshot leaks ${JSON.stringify(secret)}`).not.toContain(secret);
  expect([...keysOf(JSON.parse(raw))].sort()).toEqual(
    ['createdAt', 'messages', 'parts', 'role', 'text', 'title', 'type'].sort(),
  );
}

/** Ids a snapshot must never hold: the thread, its branches, its turns and its message ids. */
async function internalIds(threadId: string, detail: ThreadDetail): Promise<string[]> {
  const rows = await api.runtime.database.sql<{ id: string; branch_id: string }[]>`
    select id, branch_id from chat_turn_requests where thread_id = ${threadId}`;
  return [
    threadId,
    detail.thread.activeBranchId,
    ...rows.flatMap((row) => [row.id, row.branch_id]),
    ...detail.messages.map((message) => message.id),
  ];
}

describe('sharing a snapshot (H1)', () => {
  it('snapshots while items are queued without the queue, the owner or any internal id', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'what is a queue? [[words:6]]');
    const running = await client.send(threadId, `tell me more ${SLOW}`);
    expect(running.status).toBe(200);
    await readUntilWords(running, 3);
    await client.queued(threadId, 'queued secret alpha');
    await client.queued(threadId, 'queued secret beta');
    await client.json(
      'PUT',
      `/api/threads/${threadId}/messages/${(await client.detail(threadId)).messages[1]?.id}/feedback`,
      {
        rating: 'down',
        comment: 'feedback secret gamma',
      },
    );

    const created = await share(threadId);
    expect(created.token).toMatch(/^[A-Za-z0-9_-]{22,}$/); // base64url, at least 128 bits
    expect(created.url).toBe(`http://localhost:3000/share/${created.token}`);
    const detail = await client.detail(threadId);
    expect(detail.turnQueue.items).toHaveLength(2);

    const { status, raw, headers } = await readShared(created.token);
    expect(status).toBe(200);
    expect(headers.get('x-robots-tag')).toContain('noindex');
    const me = await owner();
    expectSanitized(raw, [
      'queued secret',
      'feedback secret',
      me.id,
      me.email,
      ...(await internalIds(threadId, detail)),
    ]);
    const snapshot = JSON.parse(raw) as SharedSnapshot;
    expect(snapshot.title).toBe(detail.thread.title);
    expect(snapshot.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(snapshot.messages[0]?.parts).toEqual([{ type: 'text', text: 'what is a queue? [[words:6]]' }]);
    expect(snapshot.messages[1]?.parts).toEqual([{ type: 'text', text: textOfMessage(detail.messages[1]) }]);
    expect(snapshot.messages[0]?.createdAt).toBe(detail.messages[0]?.metadata.createdAt);

    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('snapshots after a Stop & send without the hidden handoff instruction or the interrupt marks', async () => {
    const threadId = await client.createThread();
    const running = await client.send(threadId, `explain queues ${SLOW}`);
    await readUntilWords(running, 5);
    const head = await client.queued(threadId, 'shorter please [[words:6]]');
    const sent = await client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    expect(sent.status).toBe(200);
    const reply = textOfChunks(await readChunks(sent));
    // The local model opens this way only when the handoff instruction reached it.
    expect(reply.startsWith('(after interruption)')).toBe(true);
    const detail = await client.detail(threadId);
    expect(detail.messages[1]?.metadata.interrupted).toBe(true);

    const { raw } = await readShared((await share(threadId)).token);
    const me = await owner();
    expectSanitized(raw, [
      'Interrupt handoff',
      ...HANDOFF_INSTRUCTION.split('\n').map((line) => line.slice(2, 60)),
      me.id,
      me.email,
      ...(await internalIds(threadId, detail)),
    ]);
    const snapshot = JSON.parse(raw) as SharedSnapshot;
    expect(snapshot.messages.map((message) => message.parts)).toEqual(
      detail.messages.map((message) => [{ type: 'text', text: textOfMessage(message) }]),
    );
    expect(snapshot.messages[3]?.parts[0]).toEqual({ type: 'text', text: reply });
  });

  it('snapshots settled turns only: no failed attempt, no running partial, nothing queued', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'settled question [[words:4]]');
    // A failed head waits, its attempt (the message and three words) shown in the transcript.
    await client.sendAndRead(threadId, 'failing secret delta [[words:20]] [[fail-after:3]]');
    await client.queued(threadId, 'queued secret epsilon');
    const detail = await client.detail(threadId);
    expect(detail.messages).toHaveLength(4);
    expect(detail.messages[3]?.metadata.failed).toBe(true);
    const partial = textOfMessage(detail.messages[3]);

    const { raw } = await readShared((await share(threadId)).token);
    expectSanitized(raw, ['failing secret', partial, 'queued secret']);
    expect((JSON.parse(raw) as SharedSnapshot).messages.map((message) => message.parts)).toEqual(
      detail.messages.slice(0, 2).map((message) => [{ type: 'text', text: textOfMessage(message) }]),
    );

    // A reply that runs, with a steer already taken in: none of it is in a snapshot taken meanwhile.
    const other = await client.createThread();
    await client.sendAndRead(other, 'settled too [[words:3]]');
    const running = await client.send(other, 'running secret zeta [[steps:3]] [[delay:400]] [[words:30]]');
    const chunks = iterateChunks(running);
    for (;;) if ((await chunks.next()).value?.type === 'tool-input-available') break;
    await client.fetch('POST', `/api/threads/${other}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'steer secret eta',
      mode: 'steer',
    });
    for (;;) {
      const next = await chunks.next();
      if (next.done || next.value.type === 'data-steer-boundary') break;
    }
    const during = await readShared((await share(other)).token);
    expectSanitized(during.raw, ['running secret', 'steer secret']);
    expect((JSON.parse(during.raw) as SharedSnapshot).messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
    ]);
    await client.json('POST', `/api/threads/${other}/interrupt`);
    await chunks.return(undefined);

    // A reply waiting for a tool approval is stored up to its call; it has not settled either.
    const waiting = await client.createThread();
    await client.sendAndRead(waiting, 'settled as well [[words:3]]');
    await client.sendAndRead(waiting, 'awaiting secret theta [[tool:save_note]]');
    const held = await client.detail(waiting);
    expect(held.turnQueue.activeTurn?.status).toBe('awaiting_approval');
    expect(held.messages.map((message) => textOfMessage(message)).join(' ')).toContain('awaiting secret');
    const pending = await readShared((await share(waiting)).token);
    expectSanitized(pending.raw, ['awaiting secret']);
    expect((JSON.parse(pending.raw) as SharedSnapshot).messages).toHaveLength(2);
    await client.json('POST', `/api/threads/${waiting}/interrupt`);
  });

  it('does not change when the thread changes afterwards; deleting the chat revokes it', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'first [[words:4]]');
    await client.sendAndRead(threadId, 'second [[words:4]]');
    const { token } = await share(threadId);
    const before = (await readShared(token)).raw;

    await client.sendAndRead(threadId, 'third [[words:4]]');
    await client.json('PATCH', `/api/threads/${threadId}`, { title: 'Renamed later' });
    const detail = await client.detail(threadId);
    const edit = await client.fetch(
      'POST',
      `/api/threads/${threadId}/messages/${detail.messages[2]?.id}/versions`,
      { clientRequestId: crypto.randomUUID(), text: 'second, edited [[words:3]]' },
    );
    await readChunks(edit);
    const edited = await client.detail(threadId);
    const deleted = await client.json(
      'DELETE',
      `/api/threads/${threadId}/messages/${edited.messages[2]?.id}`,
    );
    expect(deleted.status).toBe(200);

    expect((await readShared(token)).raw).toBe(before);
    expect((JSON.parse(before) as SharedSnapshot).messages).toHaveLength(4);

    expect((await client.json('DELETE', `/api/threads/${threadId}`)).status).toBe(204);
    const gone = await readShared(token);
    expect(gone.status).toBe(404);
    expect((JSON.parse(gone.raw) as ErrorBody).error.code).toBe('not_found');
  });

  it('lists the live shares, and a revoke makes the link 404 for everyone', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'share me [[words:3]]');
    const first = await share(threadId);
    const second = await share(threadId);
    expect(second.token).not.toBe(first.token);

    const listed = await client.json<{ shares: Share[] }>('GET', `/api/threads/${threadId}/shares`);
    expect(listed.body.shares.map((entry) => entry.token)).toEqual([second.token, first.token]);

    expect((await client.fetch('DELETE', `/api/shares/${first.token}`)).status).toBe(204);
    expect((await readShared(first.token)).status).toBe(404);
    expect((await client.json('GET', `/api/shares/${first.token}`)).status).toBe(404);
    expect((await readShared(second.token)).status).toBe(200);
    const after = await client.json<{ shares: Share[] }>('GET', `/api/threads/${threadId}/shares`);
    expect(after.body.shares.map((entry) => entry.token)).toEqual([second.token]);
    // Revoking again: nothing to revoke.
    expect((await client.json<ErrorBody>('DELETE', `/api/shares/${first.token}`)).status).toBe(404);
  });

  it('refuses foreign threads, unknown tokens and revokes by someone else, changing nothing', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'mine [[words:3]]');
    const { token } = await share(threadId);
    const stranger = await api.client();

    for (const [method, path] of [
      ['POST', `/api/threads/${threadId}/shares`],
      ['GET', `/api/threads/${threadId}/shares`],
      ['DELETE', `/api/shares/${token}`],
    ] as const) {
      const refused = await stranger.json<ErrorBody>(method, path, method === 'POST' ? {} : undefined);
      expect([method, path, refused.status, refused.body.error.code]).toEqual([
        method,
        path,
        404,
        'not_found',
      ]);
    }
    expect((await readShared(token)).status).toBe(200);
    const listed = await client.json<{ shares: Share[] }>('GET', `/api/threads/${threadId}/shares`);
    expect(listed.body.shares).toHaveLength(1);

    for (const unknown of ['x', 'A'.repeat(32), `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`]) {
      const read = await readShared(unknown);
      expect([unknown, read.status, (JSON.parse(read.raw) as ErrorBody).error.code]).toEqual([
        unknown,
        404,
        'not_found',
      ]);
    }
    // A NUL in the address is refused before any route sees it (the request guard's address rule).
    const nul = await readShared('%00');
    expect([nul.status, (JSON.parse(nul.raw) as ErrorBody).error.code]).toEqual([400, 'bad_request']);
    const anonymous = await fetch(`${api.baseUrl}/api/threads/${threadId}/shares`, {
      method: 'POST',
      headers: APP_HEADERS,
    });
    expect(anonymous.status).toBe(401);
  });
});

describe('a shared chat with documents (D1)', () => {
  it('shows its documents to a reader through the share, and a continued copy keeps them, read by its model', async () => {
    const { threadId, pdf, md } = await chatWithDocuments(client, 'Shared reading');
    const { token } = await share(threadId);
    const snapshot = JSON.parse((await readShared(token)).raw) as SharedSnapshot;
    const files = snapshot.messages[0]?.parts.filter((part) => part.type === 'file') ?? [];
    expect(files.map((part) => (part.type === 'file' ? part.mediaType : ''))).toEqual([
      'application/pdf',
      'text/markdown',
    ]);
    // What the chips show: a PDF's pages, a text's size; nothing of what the model read.
    expect(files.map((part) => (part.type === 'file' ? [part.pages, part.size] : []))).toEqual([
      [2, pdf.size],
      [undefined, md.size],
    ]);
    const read = await fetch(`${api.baseUrl}${files[0]?.type === 'file' ? files[0].url : ''}`);
    expect(read.status).toBe(200);

    const guest = await api.client();
    const { status, body } = await guest.json<{ thread: { id: string } } & ErrorBody>(
      'POST',
      `/api/shares/${token}/continue`,
      {},
    );
    expect(status).toBe(201);
    const copy = await guest.detail(body.thread.id);
    expect(documentParts(copy)).toEqual(documentParts(await client.detail(threadId)));
    const copied = copy.messages[0]?.parts.find((part) => part.type === 'file');
    expect(copied?.url).not.toBe(`/api/media/${pdf.id}`);
    expect((await guest.fetch('GET', String(copied?.url))).status).toBe(200);
    expect((await client.fetch('GET', String(copied?.url))).status).toBe(404);
    expect(await lastReplyAgain(guest, body.thread.id)).toContain(DOCUMENTS_READ);
  });
});
