import { readFileSync } from 'node:fs';
import { type ChatExport, chatExportJsonSchema, chatExportV1, type ErrorBody } from '@chat/contracts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { HANDOFF_INSTRUCTION } from '../src/agent/handoffInstruction';
import { chatWithDocuments, exportJson, richChat } from './support/chatCopies';
import { type ApiClient, readUntilWords } from './support/client';
import { pngBytes, sendWithImages, uploaded } from './support/images';
import { TEST_RUNTIME, type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const SCHEMA_FILE = new URL('../../../packages/contracts/schema/chat-export.v1.json', import.meta.url);

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

describe('the export format (P1)', () => {
  it('has its JSON Schema checked in as the zod schema makes it', () => {
    const checkedIn = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'));
    expect(checkedIn).toEqual(chatExportJsonSchema());
  });

  it('writes files the checked-in JSON Schema and the import schema accept', async () => {
    const threadId = await richChat(client);
    const document = await exportJson(client, threadId);
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(
      JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')),
    );
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(chatExportV1.safeParse(document).success).toBe(true);
    // The schema can fail: a file with a field it does not know is not one.
    expect(validate({ ...document, queue: [] })).toBe(false);
  });
});

describe('exporting a chat as JSON (P1)', () => {
  it('holds every version, their lineage, marks, feedback, notes, approvals and images', async () => {
    const threadId = await richChat(client);
    const document = await exportJson(client, threadId);
    expect(document).toMatchObject({
      format: 'queued-turn-chat.export',
      version: 1,
      chat: { title: 'Trip planning' },
      shownVersion: 'v2',
    });
    expect(document.versions.map(({ id, parent }) => ({ id, parent }))).toEqual([
      { id: 'v1', parent: null },
      { id: 'v2', parent: 'v1' },
    ]);
    const [original, edited] = document.versions as [ChatExport['versions'][0], ChatExport['versions'][0]];
    expect(edited.editOf).toBe(original.messages[0]);
    const byKey = new Map(document.messages.map((message) => [message.id, message]));
    const texts = (keys: string[]) =>
      keys.map((key) => byKey.get(key)?.parts.find((part) => part.type === 'text' && 'text' in part));
    expect(texts(edited.messages)[0]).toEqual({ type: 'text', text: 'look at this map again [[words:4]]' });
    // Six sends, each with its reply; a reply resumed after an approval (two here) is a message of
    // its own on the Mastra driver, and goes on in the message of the call on the AI SDK driver.
    expect(original.messages.filter((key) => byKey.get(key)?.role === 'user')).toHaveLength(6);
    expect(original.messages.length).toBe(TEST_RUNTIME === 'mastra' ? 14 : 12);
    const replies = document.messages.filter((message) => message.role === 'assistant');
    expect(replies.filter((reply) => reply.interrupted).length).toBe(1);
    expect(replies.some((reply) => reply.feedback?.comment === 'just what I wanted')).toBe(true);
    expect(replies.every((reply) => reply.model === 'local' || reply.model === undefined)).toBe(true);
    expect(document.notes.map((note) => note.text)).toEqual(['buy milk']);
    expect(document.approvals.map((approval) => approval.status)).toEqual(['approved', 'denied']);
    // The image both versions show is in the file once, with its bytes.
    expect(document.images.map(({ id, name, mediaType }) => ({ id, name, mediaType }))).toEqual([
      { id: 'i1', name: 'map.png', mediaType: 'image/png' },
    ]);
    expect(Buffer.from(document.images[0]?.data ?? '', 'base64')).toEqual(Buffer.from(pngBytes(64, 48)));
  });

  it('never holds the queue, a failed attempt, hidden instructions, or any account or database id', async () => {
    const threadId = await client.createThread('Secrets');
    const running = await client.send(threadId, 'first question [[words:400]] [[delay:20]]');
    await readUntilWords(running, 3);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    // The next turn gets the hidden handoff instruction (S5); then one runs while another waits.
    await client.sendAndRead(threadId, 'second question [[words:5]]');
    // A failed attempt waits at the head with its partial reply stored; a send queues behind it.
    await client.sendAndRead(threadId, 'doomed attempt [[fail-after:3]] [[words:10]]');
    await client.queued(threadId, 'queued secret alpha');

    const response = await client.fetch('GET', `/api/threads/${threadId}/export?format=json`);
    const raw = await response.text();
    const document = JSON.parse(raw) as ChatExport;

    const { sql } = api.runtime.database;
    const session = await client.json<{ user: { id: string } }>('GET', '/api/auth/get-session');
    const turns = await sql<{ id: string; branch_id: string }[]>`
      select id, branch_id from chat_turn_requests where thread_id = ${threadId}`;
    const messageIds = (await client.detail(threadId)).messages.map((message) => message.id);
    for (const secret of [
      session.body.user.id,
      threadId,
      ...turns.flatMap((turn) => [turn.id, turn.branch_id]),
      ...messageIds,
      'queued secret alpha',
      'doomed attempt',
      HANDOFF_INSTRUCTION.slice(0, 40),
    ]) {
      expect(raw, `the export leaks ${secret}`).not.toContain(secret);
    }
    expect(document.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect([...keysOf({ ...document, images: [] })].sort()).toEqual(
      [
        'format',
        'version',
        'exportedAt',
        'chat',
        'title',
        'createdAt',
        'shownVersion',
        'versions',
        'id',
        'parent',
        'editOf',
        'lastShownAt',
        'messages',
        'role',
        'parts',
        'type',
        'text',
        'model',
        'interrupted',
        // A reply's token usage as the model reported it (C1).
        'usage',
        'inputTokens',
        'outputTokens',
        'images',
        'notes',
        'approvals',
      ].sort(),
    );
  });

  it('answers 404 for someone else’s chat, 400 for a format it does not write', async () => {
    const threadId = await client.createThread('Mine');
    const stranger = await api.client();
    for (const format of ['md', 'json']) {
      const { status, body } = await stranger.json<ErrorBody>(
        'GET',
        `/api/threads/${threadId}/export?format=${format}`,
      );
      expect(status).toBe(404);
      expect(body.error.code).toBe('not_found');
    }
    for (const query of ['?format=pdf', '']) {
      const { status, body } = await client.json<ErrorBody>('GET', `/api/threads/${threadId}/export${query}`);
      expect(status).toBe(400);
      expect(body.error.message).toMatch(/^Invalid query: format: /);
    }
  });
});

describe('exporting a chat as Markdown (P1)', () => {
  it('is the shown version, readable: who and when, the model, a stop, tool calls, images by name, notes', async () => {
    const threadId = await richChat(client);
    const original = (await client.detail(threadId)).messages[0]?.metadata.version?.branchIds[0] as string;
    await client.json('PUT', `/api/threads/${threadId}/active-branch`, { branchId: original });

    const response = await client.fetch('GET', `/api/threads/${threadId}/export?format=md`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Trip-planning.md"; filename*=UTF-8''Trip-planning.md`,
    );
    const markdown = await response.text();
    expect(markdown.startsWith('# Trip planning\n')).toBe(true);
    expect(markdown).toContain('the version shown (the chat has 2 versions)');
    expect(markdown).toContain('look at this map [[words:5]]');
    expect(markdown).not.toContain('look at this map again');
    expect(markdown).toContain('_Image: map.png (PNG, 64×48)_');
    expect(markdown).toMatch(/### Assistant · local · \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(markdown).toMatch(/### Assistant · local · stopped · /);
    expect(markdown).toContain('> Tool `current_time` returned:\n\n```json\n{\n  "now": ');
    expect(markdown).toContain('> Tool `save_note` was not run: it was denied or stopped.');
    expect(markdown).toContain('## What a reply can hold');
    expect(markdown).toMatch(/## Notes\n\n- buy milk \(/);
  });

  it('reads on its own: images are named, never linked into the app (whose links answer only their signed-in owner), and it says where the files are', async () => {
    const threadId = await client.createThread('Pictures');
    const first = await uploaded(client, threadId, pngBytes(10, 10), 'one.png');
    const second = await uploaded(client, threadId, pngBytes(12, 12), 'two_*[x].png');
    const sent = await sendWithImages(client, threadId, 'two pictures [[words:3]]', [first.id, second.id]);
    await sent.text();
    const markdown = await (await client.fetch('GET', `/api/threads/${threadId}/export?format=md`)).text();
    expect(markdown).toContain(
      '_Images and documents are named here, not included: the JSON export of this chat holds them._',
    );
    expect(markdown).toContain('_Image: one.png (PNG, 10×10)_');
    // A name's Markdown marks are text, not formatting.
    expect(markdown).toContain('_Image: two\\_\\*\\[x\\].png (PNG, 12×12)_');
    expect(markdown).not.toContain('/api/');
    expect(markdown).not.toContain('](');

    // A chat with no files says nothing of them.
    const plain = await client.createThread('Words only');
    await client.sendAndRead(plain, 'hello [[words:3]]');
    const words = await (await client.fetch('GET', `/api/threads/${plain}/export?format=md`)).text();
    expect(words).not.toContain('Images and documents');
  });
});

describe('exporting a chat with documents (D1)', () => {
  it('holds each document once with its bytes, named by the parts that show it; a chat without documents has no such list', async () => {
    const { threadId, pdf, md } = await chatWithDocuments(client);
    const document = await exportJson(client, threadId);
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(
      JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')),
    );
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(chatExportV1.safeParse(document).success).toBe(true);

    const first = document.messages[0];
    expect(first?.parts).toEqual([
      { type: 'text', text: 'summarise these' },
      { type: 'file', mediaType: 'application/pdf', document: 'd1', filename: 'report.pdf' },
      { type: 'file', mediaType: 'text/markdown', document: 'd2', filename: 'plan.md' },
    ]);
    expect(document.images).toEqual([]);
    expect(document.documents?.map(({ id, name, mediaType }) => ({ id, name, mediaType }))).toEqual([
      { id: 'd1', name: 'report.pdf', mediaType: 'application/pdf' },
      { id: 'd2', name: 'plan.md', mediaType: 'text/markdown' },
    ]);
    for (const [entry, attachment] of [
      [document.documents?.[0], pdf],
      [document.documents?.[1], md],
    ] as const) {
      const served = await client.fetch('GET', `/api/media/${attachment.id}`);
      expect(Buffer.from(entry?.data ?? '', 'base64')).toEqual(Buffer.from(await served.arrayBuffer()));
    }
    // The text is read from the file again on an import: it is not in the export, nor in memory.
    expect(JSON.stringify(document)).not.toContain('zeta eta');

    const markdown = await (await client.fetch('GET', `/api/threads/${threadId}/export?format=md`)).text();
    expect(markdown).toContain('_Attached: report.pdf (PDF · 2 pages)_');
    expect(markdown).toMatch(/_Attached: plan\.md \(Markdown · \d+ B\)_/);
    expect(markdown).not.toContain('/api/media/');

    const plain = await client.createThread('No documents');
    await client.sendAndRead(plain, 'hello [[words:3]]');
    expect('documents' in (await exportJson(client, plain))).toBe(false);
  });
});
