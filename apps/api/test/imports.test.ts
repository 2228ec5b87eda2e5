import {
  type ChatExport,
  DOCX_MEDIA_TYPE,
  type ErrorBody,
  type NewChatAnswer,
  type ThreadDetail,
} from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chatWithDocuments,
  comparable,
  DOCUMENTS_READ,
  documentParts,
  everyVersion,
  exportJson,
  lastReplyAgain,
  richChat,
} from './support/chatCopies';
import { APP_HEADERS, type ApiClient, textOfChunks, textOfMessage } from './support/client';
import { pdfBytes } from './support/documents';
import { docxBomb, docxBytes } from './support/docx';
import { jpegBytes, pngBytes, uploaded } from './support/images';
import { startTestApi, type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

async function importChat(document: unknown, who: ApiClient = client) {
  return await who.json<NewChatAnswer & ErrorBody>('POST', '/api/imports', document);
}

/** A small valid export: one version, a user message with an image and its reply. */
function smallExport(overrides: Partial<ChatExport> = {}): ChatExport {
  return {
    format: 'queued-turn-chat.export',
    version: 1,
    exportedAt: '2026-12-01T10:00:00.000Z',
    chat: { title: 'A small chat', createdAt: '2026-12-01T09:00:00.000Z' },
    shownVersion: 'v1',
    versions: [
      {
        id: 'v1',
        parent: null,
        editOf: null,
        lastShownAt: '2026-12-01T09:59:00.000Z',
        messages: ['m1', 'm2'],
      },
    ],
    messages: [
      {
        id: 'm1',
        role: 'user',
        createdAt: '2026-12-01T09:00:01.000Z',
        parts: [
          { type: 'text', text: 'what is on this picture?' },
          { type: 'file', mediaType: 'image/png', image: 'i1', filename: 'cat.png' },
        ],
      },
      {
        id: 'm2',
        role: 'assistant',
        createdAt: '2026-12-01T09:00:02.000Z',
        parts: [{ type: 'text', text: 'A cat, sitting.' }],
        model: 'local',
      },
    ],
    images: [
      {
        id: 'i1',
        name: 'cat.png',
        mediaType: 'image/png',
        data: Buffer.from(pngBytes(32, 24)).toString('base64'),
      },
    ],
    notes: [],
    approvals: [],
    ...overrides,
  };
}

/** Row counts of every table a chat writes to, the app's and Mastra's. */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = [
    'threads',
    'branches',
    'message_origins',
    'message_lineage',
    'chat_turn_requests',
    'attachments',
    'attachment_blobs',
    'attachment_texts',
    'message_feedback',
    'hitl_requests',
    'notes',
    'mastra.mastra_threads',
    'mastra.mastra_messages',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await api.runtime.database.sql.unsafe<{ count: string }[]>(`select count(*) from ${table}`);
    counts[table] = Number(row?.count);
  }
  return counts;
}

describe('importing an export (P2)', () => {
  it('round trip: export, import, and every version shows what the original shows, images, marks, feedback, notes and approvals included', async () => {
    const threadId = await richChat(client);
    const original = await everyVersion(client, threadId);
    expect(original.length).toBe(2);

    const answer = await importChat(await exportJson(client, threadId));
    expect(answer.status).toBe(201);
    const imported = answer.body.thread;
    expect(imported.id).not.toBe(threadId);
    // Told apart from the chat it was exported from, which may be in the same list.
    expect(imported.title).toBe('Copy of Trip planning');
    expect(imported.forkedFrom).toBeUndefined();

    const copy = await everyVersion(client, imported.id);
    expect(comparable(copy)).toEqual(comparable(original));
    // What the comparison rests on is really there.
    const shown = copy[0] as ThreadDetail;
    const stopped = copy.flatMap((detail) => detail.messages).find((message) => message.metadata.interrupted);
    expect(textOfMessage(stopped).length).toBeGreaterThan(0);
    expect(
      copy.some((detail) =>
        detail.messages.some((message) => message.metadata.feedback?.comment === 'just what I wanted'),
      ),
    ).toBe(true);
    expect(shown.notes.map((note) => note.text)).toEqual(['buy milk']);
    expect(shown.hitl.map((request) => request.status)).toEqual(['approved', 'denied']);
    expect(shown.messages[0]?.metadata.version).toMatchObject({ index: 2, count: 2 });
  });

  it('an export of the import is the same file (but for when it was made, and its title marked as a copy)', async () => {
    const threadId = await richChat(client, 'Export twice');
    const first = await exportJson(client, threadId);
    const { body } = await importChat(first);
    const second = await exportJson(client, body.thread.id);
    expect({ ...second, exportedAt: '', chat: { ...second.chat, createdAt: '' } }).toEqual({
      ...first,
      exportedAt: '',
      chat: { ...first.chat, title: 'Copy of Export twice', createdAt: '' },
    });
  });

  it("copies the images into the importer's own, served to them and checked like an upload", async () => {
    const { status, body } = await importChat(smallExport());
    expect(status).toBe(201);
    const detail = await client.detail(body.thread.id);
    const file = detail.messages[0]?.parts.find((part) => part.type === 'file');
    expect(file).toMatchObject({ mediaType: 'image/png', filename: 'cat.png' });
    const media = await client.fetch('GET', String(file?.url));
    expect(media.status).toBe(200);
    expect(new Uint8Array(await media.arrayBuffer())).toEqual(pngBytes(32, 24));
    const stranger = await api.client();
    expect((await stranger.fetch('GET', String(file?.url))).status).toBe(404);
  });

  it('goes on like any chat: the model sees the imported history, and a stopped last reply gives the next turn the handoff (S5)', async () => {
    const document = smallExport({
      versions: [
        {
          id: 'v1',
          parent: null,
          editOf: null,
          lastShownAt: '2026-12-01T09:59:00.000Z',
          messages: ['m1', 'm2'],
        },
      ],
      messages: [
        {
          id: 'm1',
          role: 'user',
          createdAt: '2026-12-01T09:00:01.000Z',
          parts: [{ type: 'text', text: 'plan a trip' }],
        },
        {
          id: 'm2',
          role: 'assistant',
          createdAt: '2026-12-01T09:00:02.000Z',
          parts: [{ type: 'text', text: 'First, pick' }],
          model: 'local',
          interrupted: true,
        },
      ],
      images: [],
    });
    const { body } = await importChat(document);
    const { chunks } = await client.sendAndRead(body.thread.id, 'to Lisbon [[history]] [[words:4]]');
    const reply = textOfChunks(chunks);
    expect(reply.startsWith('(after interruption)')).toBe(true);
    expect(reply).toContain('History: "plan a trip"');
    const detail = await client.detail(body.thread.id);
    expect(detail.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(detail.messages[1]?.metadata).toMatchObject({ interrupted: true, model: 'local' });
  });

  it('refuses what its schema does not allow, naming the first problem, and writes nothing', async () => {
    const before = await rowCounts();
    const cases: Array<[unknown, string]> = [
      [{ ...smallExport(), version: 2 }, 'version'],
      [{ ...smallExport(), format: 'something-else' }, 'format'],
      [{ ...smallExport(), secret: 'extra' }, ''],
      [
        smallExport({
          messages: [
            { ...smallExport().messages[0], role: 'system' } as never,
            smallExport().messages[1] as never,
          ],
        }),
        'messages.0.role',
      ],
      [
        smallExport({
          messages: [
            smallExport().messages[0] as never,
            { ...smallExport().messages[1], createdAt: 'yesterday' } as never,
          ],
        }),
        'messages.1.createdAt',
      ],
    ];
    for (const [document, field] of cases) {
      const { status, body } = await importChat(document);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message).toMatch(/^Invalid request body: /);
      if (field) expect(body.error.field).toBe(field);
    }
    expect(await rowCounts()).toEqual(before);
  });

  it('refuses an import whose keys name nothing in it, or whose versions do not hold together', async () => {
    const base = smallExport();
    const version = base.versions[0] as ChatExport['versions'][number];
    const cases: Array<[ChatExport, string, string]> = [
      [smallExport({ shownVersion: 'v9' }), 'shownVersion', 'names no version of this export'],
      [
        smallExport({ versions: [{ ...version, messages: ['m1', 'm7'] }] }),
        'versions.0.messages.1',
        'names no message of this export',
      ],
      [
        smallExport({ versions: [{ ...version, messages: ['m2', 'm1'] }] }),
        'versions.0.messages.1',
        'is older than the message before it',
      ],
      [
        smallExport({ versions: [{ ...version, messages: ['m1', 'm1', 'm2'] }] }),
        'versions.0.messages.1',
        'lists the same message twice',
      ],
      [smallExport({ versions: [{ ...version, messages: ['m1'] }] }), 'messages.1', 'is in no version'],
      [
        smallExport({
          messages: [
            { ...(base.messages[0] as ChatExport['messages'][number]), feedback: { rating: 'up' } },
            base.messages[1] as ChatExport['messages'][number],
          ],
        }),
        'messages.0',
        'only a reply has a model, a stop or feedback',
      ],
      [
        smallExport({
          approvals: [
            {
              toolCallId: 'call-nowhere',
              toolName: 'save_note',
              args: {},
              status: 'approved',
              createdAt: '2026-12-01T09:00:01.500Z',
              decidedAt: null,
            },
          ],
        }),
        'approvals.0.toolCallId',
        'names no tool call of this export',
      ],
    ];
    for (const [document, field, words] of cases) {
      const { status, body } = await importChat(document);
      expect(status, field).toBe(400);
      expect(body.error.field).toBe(field);
      expect(body.error.message).toContain(words);
    }
  });

  it('refuses foreign media: an image that is not one of the file, a URL to someone else’s image, bytes that are not an image', async () => {
    // The victim's image: an import must never reach it.
    const victim = await api.client();
    const victimThread = await victim.createThread();
    const secret = await uploaded(victim, victimThread, jpegBytes(40, 30));
    const base = smallExport();
    const userMessage = base.messages[0] as ChatExport['messages'][number];
    const withParts = (parts: unknown[]) =>
      smallExport({ messages: [{ ...userMessage, parts } as never, base.messages[1] as never] });
    const before = await rowCounts();

    const missing = await importChat(
      withParts([
        { type: 'text', text: 'hi' },
        { type: 'file', mediaType: 'image/png', image: 'i2' },
      ]),
    );
    expect(missing.status).toBe(400);
    expect(missing.body.error.field).toBe('messages.0.parts.1.image');

    const byUrl = await importChat(
      withParts([
        { type: 'text', text: 'hi' },
        { type: 'file', mediaType: 'image/jpeg', url: `/api/media/${secret.id}` },
      ]),
    );
    expect(byUrl.status).toBe(400);
    expect(byUrl.body.error.field).toMatch(/^messages\.0\.parts\.1/);

    const notAnImage = await importChat(
      smallExport({
        images: [
          {
            id: 'i1',
            name: 'cat.png',
            mediaType: 'image/png',
            data: Buffer.from('<html>hi</html>').toString('base64'),
          },
        ],
      }),
    );
    expect(notAnImage.status).toBe(415);
    expect(notAnImage.body.error).toMatchObject({ code: 'unsupported_media_type', field: 'images.0.data' });

    const mislabelled = await importChat(
      smallExport({
        images: [
          {
            id: 'i1',
            name: 'cat.png',
            mediaType: 'image/png',
            data: Buffer.from(jpegBytes(10, 10)).toString('base64'),
          },
        ],
      }),
    );
    expect(mislabelled.status).toBe(415);
    expect(mislabelled.body.error.field).toBe('images.0.mediaType');

    const huge = await importChat(
      smallExport({
        images: [
          {
            id: 'i1',
            name: 'cat.png',
            mediaType: 'image/png',
            data: Buffer.from(pngBytes(20_000, 20_000)).toString('base64'),
          },
        ],
      }),
    );
    expect(huge.status).toBe(413);
    expect(huge.body.error.field).toBe('images.0.data');

    // None of these wrote anything, and the victim's image is still only theirs.
    expect(await rowCounts()).toEqual(before);
    const owners = await api.runtime.database.sql<{ owner_id: string }[]>`
      select owner_id from attachments where id = ${secret.id}`;
    expect(owners.length).toBe(1);
  });

  it('bounds the body as it arrives (413) and the counts it holds (messages, versions, images)', async () => {
    const oversized = `{"format":"queued-turn-chat.export","pad":"${'x'.repeat(33 * 1024 * 1024)}"}`;
    const big = await client.fetch('POST', '/api/imports', oversized);
    expect(big.status).toBe(413);
    expect(((await big.json()) as ErrorBody).error.message).toBe('An import can be at most 32 MB.');

    const base = smallExport();
    const many = Array.from({ length: 20_001 }, (_, index) => ({
      id: `m${index + 1}`,
      role: 'user' as const,
      createdAt: base.messages[0]?.createdAt as string,
      parts: [],
    }));
    const tooMany = await importChat(smallExport({ messages: many }));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({
      field: 'messages',
      message: 'Invalid request body: messages: An import can hold at most 20000 messages.',
    });
  });

  it('takes JSON only, from the app only', async () => {
    const document = JSON.stringify(smallExport());
    const asText = await client.fetch('POST', '/api/imports', document, {
      headers: { 'content-type': 'text/plain' },
    });
    expect(asText.status).toBe(415);
    const crossSite = await client.fetch('POST', '/api/imports', document, {
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const anonymous = await fetch(`${api.baseUrl}/api/imports`, {
      method: 'POST',
      headers: APP_HEADERS,
      body: document,
    });
    expect(anonymous.status).toBe(401);
  });

  it('all or nothing: an import that fails part way leaves no row behind, in the app’s tables or Mastra’s', async () => {
    // A real fault in the database, late in the write: the notes go in after memory, turns,
    // images, feedback and approvals.
    const { sql } = api.runtime.database;
    await sql.unsafe(`
      create function refuse_test_note() returns trigger language plpgsql as $$
      begin
        if new.text = 'make the import fail' then raise exception 'refused by the test'; end if;
        return new;
      end $$;
      create trigger refuse_test_note before insert on notes for each row execute function refuse_test_note();`);
    try {
      const threadId = await richChat(client, 'Half an import');
      const document = await exportJson(client, threadId);
      const before = await rowCounts();
      const failed = await importChat({
        ...document,
        notes: [...document.notes, { text: 'make the import fail', createdAt: '2026-12-01T10:00:00.000Z' }],
      });
      expect(failed.status).toBe(500);
      expect(await rowCounts()).toEqual(before);
      // The same file without the poison imports whole.
      const worked = await importChat(document);
      expect(worked.status).toBe(201);
      const after = await rowCounts();
      expect(after.threads).toBe((before.threads ?? 0) + 1);
      expect(after['mastra.mastra_messages']).toBeGreaterThan(before['mastra.mastra_messages'] as number);
    } finally {
      await sql.unsafe('drop trigger refuse_test_note on notes; drop function refuse_test_note();');
    }
  });
});

describe('import rate limit', () => {
  // A second instance on the same database (Mastra sets its schema up once per process).
  let limited: TestApi;
  beforeAll(async () => {
    limited = await startTestApi(api.runtime.database.url, { RATE_LIMIT_THREADS_PER_ACCOUNT: '2' });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('counts an import as a new chat: past the limit, 429 rate_limited with Retry-After, and nothing is written', async () => {
    const who = await limited.client();
    expect((await importChat(smallExport(), who)).status).toBe(201);
    expect((await importChat(smallExport(), who)).status).toBe(201);
    const refused = await who.fetch('POST', '/api/imports', smallExport());
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await who.allThreads()).length).toBe(2);
  });
});

describe('an import makes the chat as sent', () => {
  it('keeps a long chat linear: 2,000 messages import, show and export as they came', async () => {
    const messages: ChatExport['messages'] = [];
    const start = Date.parse('2026-11-01T00:00:00.000Z');
    for (let index = 0; index < 2_000; index++) {
      messages.push({
        id: `m${index + 1}`,
        role: index % 2 === 0 ? 'user' : 'assistant',
        // Pairs share a millisecond: the order must still be the file's.
        createdAt: new Date(start + Math.floor(index / 2)).toISOString(),
        parts: [{ type: 'text', text: `message ${index + 1}` }],
      });
    }
    const document = smallExport({
      versions: [
        {
          id: 'v1',
          parent: null,
          editOf: null,
          lastShownAt: '2026-12-01T00:00:00.000Z',
          messages: messages.map((m) => m.id),
        },
      ],
      messages,
      images: [],
    });
    const { status, body } = await importChat(document);
    expect(status).toBe(201);
    const detail = await client.detail(body.thread.id);
    expect(detail.messages.map((message) => textOfMessage(message))).toEqual(
      messages.map((_, index) => `message ${index + 1}`),
    );
    // Exported back, the long chat is the file it came from: every message, in order, once.
    const exported = await exportJson(client, body.thread.id);
    expect(exported.versions.map((version) => version.messages.length)).toEqual([2_000]);
    expect(exported.messages.map(({ role, createdAt, parts }) => ({ role, createdAt, parts }))).toEqual(
      messages.map(({ role, createdAt, parts }) => ({ role, createdAt, parts })),
    );
    const markdown = await (
      await client.fetch('GET', `/api/threads/${body.thread.id}/export?format=md`)
    ).text();
    expect(markdown.match(/^### /gm)).toHaveLength(2_000);
    expect(markdown).toContain('message 2000');

    const { chunks } = await client.sendAndRead(body.thread.id, 'and then? [[words:8]]');
    expect(textOfChunks(chunks)).toContain('You said: "and then?"');
  });
});

describe('importing documents (D1)', () => {
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  const notes = new TextEncoder().encode('# Notes\n\nbring a map\n');
  type Entry = NonNullable<ChatExport['documents']>[number];
  const entry = (id: string): Entry => ({
    id,
    name: 'notes.md',
    mediaType: 'text/markdown',
    data: base64(notes),
  });

  /** A small export whose user message carries one document, `d1`, as `entry` describes it. */
  function withDocument(changes: Partial<Entry> = {}): ChatExport {
    const base = smallExport();
    const user = base.messages[0] as ChatExport['messages'][number];
    return smallExport({
      messages: [
        {
          ...user,
          parts: [
            { type: 'text', text: 'what do my notes say?' },
            { type: 'file', mediaType: 'text/markdown', document: 'd1', filename: 'notes.md' },
          ],
        },
        base.messages[1] as ChatExport['messages'][number],
      ],
      images: [],
      documents: [{ ...entry('d1'), ...changes }],
    });
  }

  it('round trip: the documents come back as files of their own, their text read again, and the model reads them', async () => {
    const { threadId, pdf } = await chatWithDocuments(client, 'Documents there and back');
    const exported = await exportJson(client, threadId);
    const { status, body } = await importChat(exported);
    expect(status, JSON.stringify(body)).toBe(201);

    const copy = await client.detail(body.thread.id);
    expect(documentParts(copy)).toEqual(documentParts(await client.detail(threadId)));
    expect(documentParts(copy).map((part) => part.filename)).toEqual(['report.pdf', 'plan.md']);
    const copied = copy.messages[0]?.parts.find((part) => part.type === 'file');
    expect(copied?.url).not.toBe(`/api/media/${pdf.id}`);
    const media = await client.fetch('GET', String(copied?.url));
    expect(media.status).toBe(200);
    expect(new Uint8Array(await media.arrayBuffer())).toEqual(
      new Uint8Array(await (await client.fetch('GET', `/api/media/${pdf.id}`)).arrayBuffer()),
    );
    const texts = await api.runtime.database.sql<{ name: string; pages: number | null; text: string }[]>`
      select a.name, a.pages, t.text from attachment_texts t join attachments a on a.id = t.attachment_id
      where a.thread_id = ${body.thread.id} order by a.name`;
    expect(texts.map(({ name, pages }) => ({ name, pages }))).toEqual([
      { name: 'plan.md', pages: null },
      { name: 'report.pdf', pages: 2 },
    ]);
    expect(await lastReplyAgain(client, body.thread.id)).toContain(DOCUMENTS_READ);
    // And the import exports back as it came.
    const again = await exportJson(client, body.thread.id);
    expect(again.documents).toEqual(exported.documents);
  });

  it('still takes an export from before documents (no documents field)', async () => {
    const old = smallExport();
    expect('documents' in old).toBe(false);
    const { status } = await importChat(old);
    expect(status).toBe(201);
  });

  it('refuses a bad or oversized document with its code and where it is, writing nothing', async () => {
    const before = await rowCounts();
    const pages = Array.from({ length: 501 }, (_, index) => `page ${index + 1}`);
    const cases: Array<[ChatExport, number, string, string]> = [
      [withDocument({ id: 'd2' }), 400, 'bad_request', 'messages.0.parts.1.document'],
      [
        {
          ...withDocument(),
          documents: [entry('d1'), entry('d2')],
        },
        400,
        'bad_request',
        'documents.1',
      ],
      [
        withDocument({ data: base64(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0])) }),
        415,
        'unsupported_media_type',
        'documents.0.data',
      ],
      [
        withDocument({ data: base64(pngBytes(8, 8)) }),
        415,
        'unsupported_media_type',
        'documents.0.mediaType',
      ],
      [
        withDocument({ mediaType: 'application/pdf' }),
        415,
        'unsupported_media_type',
        'documents.0.mediaType',
      ],
      [
        withDocument({
          mediaType: 'application/pdf',
          name: 'broken.pdf',
          data: base64(new TextEncoder().encode('%PDF-1.7 not really')),
        }),
        415,
        'unsupported_media_type',
        'documents.0.data',
      ],
      [
        withDocument({ mediaType: 'application/pdf', name: 'long.pdf', data: base64(pdfBytes(pages)) }),
        413,
        'too_large',
        'documents.0.data',
      ],
      [
        withDocument({ data: 'A'.repeat(Math.ceil((20 * 1024 * 1024) / 3) * 4 + 4) }),
        400,
        'bad_request',
        'documents.0.data',
      ],
      [withDocument({ mediaType: 'application/zip' as never }), 400, 'bad_request', 'documents.0.mediaType'],
    ];
    for (const [document, status, code, field] of cases) {
      const refused = await importChat(document);
      expect(refused.status, field).toBe(status);
      expect(refused.body.error.code, field).toBe(code);
      expect(refused.body.error.field, field).toBe(field);
    }
    // Four images and documents a message, together, as for a send.
    const five = withDocument();
    const user = five.messages[0] as ChatExport['messages'][number];
    five.messages[0] = {
      ...user,
      parts: [
        ...user.parts,
        ...['d2', 'd3', 'd4', 'd5'].map((id) => ({
          type: 'file' as const,
          mediaType: 'text/markdown' as const,
          document: id,
        })),
      ],
    };
    five.documents = ['d1', 'd2', 'd3', 'd4', 'd5'].map(entry);
    const tooMany = await importChat(five);
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.error).toMatchObject({ code: 'too_large', field: 'messages.0.parts' });
    expect(await rowCounts()).toEqual(before);

    // The same file with a good document is taken.
    expect((await importChat(withDocument())).status).toBe(201);
  }, 60_000);

  it('takes a Word document, its text read again as at an upload; a zip bomb called one is refused at its place', async () => {
    const docx = (bytes: Uint8Array) =>
      withDocument({ name: 'memo.docx', mediaType: DOCX_MEDIA_TYPE, data: base64(bytes) });
    const { status, body } = await importChat(docx(docxBytes(['Bring a map', 'and water'])));
    expect(status, JSON.stringify(body)).toBe(201);
    const texts = await api.runtime.database.sql<{ media_type: string; text: string }[]>`
      select a.media_type, t.text from attachment_texts t join attachments a on a.id = t.attachment_id
      where a.thread_id = ${body.thread.id}`;
    expect(texts).toEqual([{ media_type: DOCX_MEDIA_TYPE, text: 'Bring a map\nand water' }]);

    const before = await rowCounts();
    const bomb = await importChat(docx(await docxBomb(300, { declaredBytes: 1024 })));
    expect(bomb.status).toBe(415);
    expect(bomb.body.error).toEqual({
      code: 'unsupported_media_type',
      message:
        'Invalid request body: documents.0.data: This Word document could not be read: it unpacks to more than 64 MB.',
      field: 'documents.0.data',
    });
    expect(await rowCounts()).toEqual(before);
  }, 60_000);
});
