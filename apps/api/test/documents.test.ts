import { type Attachment, documentCutText, MAX_DOCUMENT_BYTES, refusalMessages } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { parseDocumentPrompt } from '../src/agent/documentPrompt';
import { countTextTokens } from '../src/agent/tokenCount';
import { countPieces } from '../src/chats/attachments/documentCheck';
import { documentTexts, type ReadTextSlice } from '../src/chats/attachments/documentContext';
import { resolveImages } from '../src/chats/attachments/modelContext';
import { postgresAttachmentStorage } from '../src/chats/attachments/storage';
import { sweepUnsentAttachments } from '../src/chats/attachments/sweep';
import { type ApiClient, readChunks, textOfChunks } from './support/client';
import { pdfBomb, pdfBytes } from './support/documents';
import { pngBytes, sendWithImages, upload, uploaded } from './support/images';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
// Small budgets so a test can show what is cut; the document reader's memory is small too.
useTestApi(
  (started) => {
    ({ api, client } = started);
  },
  { DOCUMENT_TOKENS_PER_MESSAGE: '400', DOCUMENT_TOKENS_PER_TURN: '600', DOCUMENT_READ_MEMORY_MB: '128' },
);

type Refusal = { error: { code: string; message: string } };

/**
 * Documents' texts read from memory as storage reads them (slices counted in code points), with
 * their pieces counted (or not: a row from before pieces were counted). `fetched` counts the
 * characters handed out.
 */
function readerOf(
  texts: ReadonlyMap<string, { text: string; mediaType: Attachment['mediaType'] }>,
  counted = true,
): ReadTextSlice & { fetched: number } {
  const read = Object.assign(
    async (id: string, from: number, chars: number) => {
      const stored = texts.get(id);
      if (!stored) return undefined;
      const text = [...stored.text].slice(from, from + chars).join('');
      read.fetched += [...text].length;
      return {
        text,
        pieces:
          counted && stored.mediaType !== 'image/png'
            ? countPieces(stored.mediaType as never, stored.text)
            : null,
      };
    },
    { fetched: 0 },
  );
  return read;
}

const text = (value: string) => new TextEncoder().encode(value) as Uint8Array<ArrayBuffer>;

async function uploadedAs(
  threadId: string,
  bytes: Uint8Array<ArrayBuffer>,
  name: string,
): Promise<Attachment> {
  const response = await upload(client, threadId, bytes, name, 'application/octet-stream');
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { attachment: Attachment }).attachment;
}

async function replyOf(response: Response): Promise<string> {
  expect(response.status).toBe(200);
  return textOfChunks(await readChunks(response));
}

async function countRows(table: 'attachments' | 'attachment_texts', threadId: string): Promise<number> {
  const sql = api.runtime.database.sql;
  const [row] =
    table === 'attachments'
      ? await sql<
          { count: number }[]
        >`select count(*)::int as count from attachments where thread_id = ${threadId}`
      : await sql<{ count: number }[]>`
          select count(*)::int as count from attachment_texts t join attachments a on a.id = t.attachment_id
          where a.thread_id = ${threadId}`;
  return row?.count ?? 0;
}

describe('uploading a document', () => {
  it('takes a PDF by its header and text by its bytes, whatever the name says; the name picks the kind of text', async () => {
    const threadId = await client.createThread();
    const pdf = await uploadedAs(
      threadId,
      pdfBytes(['Quarterly report', 'Revenue grew (a lot)', 'The end']),
      'report.bin',
    );
    expect(pdf).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'report.bin',
      mediaType: 'application/pdf',
      size: expect.any(Number),
      width: 0,
      height: 0,
      pages: 3,
      words: 8,
    });
    const kinds = await Promise.all(
      [
        ['notes.md', '# Notes\n\nSome *text*.'],
        ['table.csv', 'a,b\n1,2\n'],
        ['data.json', '{"a": [1, 2]}'],
        ['main.ts', 'export const x = 1;\n'],
        ['README', 'plain words here'],
      ].map(async ([name, body]) => (await uploadedAs(threadId, text(body ?? ''), name ?? '')).mediaType),
    );
    expect(kinds).toEqual(['text/markdown', 'text/csv', 'application/json', 'text/plain', 'text/plain']);
    expect(await countRows('attachment_texts', threadId)).toBe(6);
  });

  it('refuses bytes that are neither an image, a PDF, a zip nor UTF-8 text with 415, storing nothing', async () => {
    const threadId = await client.createThread();
    const withNul = text('looks like text\u0000but is not');
    const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]); // "café" in Latin-1: not UTF-8
    // (A zip is read as a Word document, and refused as one: `wordDocuments.test.ts`.)
    for (const [what, bytes] of [
      ['a NUL byte', withNul],
      ['invalid UTF-8', latin1],
    ] as const) {
      const response = await upload(
        client,
        threadId,
        bytes as Uint8Array<ArrayBuffer>,
        'notes.md',
        'text/markdown',
      );
      expect(response.status, what).toBe(415);
      const { error } = (await response.json()) as Refusal;
      expect(error.code, what).toBe('unsupported_media_type');
      expect(error.message, what).toContain('PDFs, Word documents (.docx) and text files');
    }
    expect(await countRows('attachments', threadId)).toBe(0);
  });

  it('refuses a malformed PDF and a PDF bomb with a reason, in bounded time and memory, while the API keeps answering', async () => {
    const threadId = await client.createThread();
    const malformed = await upload(
      client,
      threadId,
      text('%PDF-1.7\nthis is not a PDF at all'),
      'broken.pdf',
    );
    expect(malformed.status).toBe(415);
    expect(((await malformed.json()) as Refusal).error).toEqual({
      code: 'unsupported_media_type',
      message: 'This PDF could not be read: it is damaged or not a PDF.',
    });

    // 400 MB of text operators in about 1.4 MB: read naively it holds hundreds of megabytes.
    const bomb = await pdfBomb(400);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    let refused: Response;
    try {
      const pending = upload(client, threadId, bomb, 'bomb.pdf');
      const health = await fetch(`${api.baseUrl}/api/health`);
      expect(health.status).toBe(200);
      refused = await pending;
    } finally {
      clearInterval(sampler);
    }
    // The API runs in this process: reading the bomb grew it by far less than the bomb holds.
    expect((peak - before) / (1024 * 1024)).toBeLessThan(200);
    expect(refused.status).toBe(415);
    const { error } = (await refused.json()) as Refusal;
    expect(error.code).toBe('unsupported_media_type');
    // Which of the reader's limits a loaded machine meets first varies; either is the reason.
    expect(error.message).toMatch(
      /^This PDF could not be read: reading it (needed too much memory|took too long)\.$/,
    );
    expect(await countRows('attachments', threadId)).toBe(0);
  }, 60_000);

  it('refuses a PDF with more pages than the bound with 413 too_large', async () => {
    const threadId = await client.createThread();
    const pages = Array.from({ length: 501 }, (_, index) => `page ${index + 1}`);
    const response = await upload(client, threadId, pdfBytes(pages), 'long.pdf');
    expect(response.status).toBe(413);
    expect(((await response.json()) as Refusal).error).toEqual({
      code: 'too_large',
      message: 'PDFs can have at most 500 pages.',
    });
    const atBound = await uploadedAs(threadId, pdfBytes(pages.slice(0, 500)), 'ok.pdf');
    expect(atBound.pages).toBe(500);
  }, 60_000);

  it('takes a document over 10 MB (the image bound) up to 20 MB, and refuses one past it with 413', async () => {
    const threadId = await client.createThread();
    const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n';
    const big = text(line.repeat(Math.floor((15 * 1024 * 1024) / line.length)));
    const taken = await uploadedAs(threadId, big, 'big.txt');
    expect(taken.size).toBe(big.byteLength);
    // Exactly the bound is taken; one byte more is refused, saying what the bound is.
    const exact = new Uint8Array(MAX_DOCUMENT_BYTES).fill(97);
    expect((await uploadedAs(threadId, exact, 'exact.txt')).size).toBe(MAX_DOCUMENT_BYTES);
    const tooBig = new Uint8Array(MAX_DOCUMENT_BYTES + 1).fill(97);
    const refused = await upload(client, threadId, tooBig, 'huge.txt');
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as Refusal).error).toMatchObject({
      code: 'too_large',
      message: refusalMessages.too_large.document,
    });
    // An image keeps its own bound.
    const bigImage = await upload(client, threadId, pngBytes(100, 100, 11 * 1024 * 1024), 'big.png');
    expect(bigImage.status).toBe(413);
    expect(await countRows('attachments', threadId)).toBe(2);
  }, 120_000);

  it('shares the per-message limit with images, only the owner reads it, unsent ones are swept and the chat takes them along', async () => {
    const threadId = await client.createThread();
    const ids = [
      (await uploaded(client, threadId, pngBytes(10, 10))).id,
      (await uploadedAs(threadId, text('one'), 'a.txt')).id,
      (await uploadedAs(threadId, text('two'), 'b.txt')).id,
      (await uploadedAs(threadId, pdfBytes(['three']), 'c.pdf')).id,
      (await uploadedAs(threadId, text('five'), 'e.txt')).id,
    ];
    const tooMany = await sendWithImages(client, threadId, 'five', ids);
    expect(tooMany.status).toBe(400);

    const stranger = await api.client();
    expect((await stranger.fetch('GET', `/api/media/${ids[1]}`)).status).toBe(404);

    await sweepUnsentAttachments(api.runtime.database.db, new Date(Date.now() + 60_000));
    expect(await countRows('attachments', threadId)).toBe(0);

    const kept = await uploadedAs(threadId, text('kept'), 'kept.txt');
    await replyOf(await sendWithImages(client, threadId, 'read it', [kept.id]));
    await sweepUnsentAttachments(api.runtime.database.db, new Date(Date.now() + 60_000));
    expect(await countRows('attachment_texts', threadId)).toBe(1);
    expect((await client.fetch('DELETE', `/api/threads/${threadId}`)).status).toBe(204);
    expect(await countRows('attachment_texts', threadId)).toBe(0);
  });
});

describe('serving a document', () => {
  it('serves a PDF inline under a strict CSP, and text as plain text that is never rendered as HTML', async () => {
    const threadId = await client.createThread();
    const pdf = await uploadedAs(threadId, pdfBytes(['hello']), 'report.pdf');
    const html = await uploadedAs(threadId, text('<script>alert(1)</script>'), 'page.html');
    expect(html.mediaType).toBe('text/plain');

    const pdfResponse = await client.fetch('GET', `/api/media/${pdf.id}`);
    expect(pdfResponse.status).toBe(200);
    expect(pdfResponse.headers.get('content-type')).toBe('application/pdf');
    expect(pdfResponse.headers.get('content-disposition')).toBe(`inline; filename*=UTF-8''report.pdf`);
    expect(pdfResponse.headers.get('x-content-type-options')).toBe('nosniff');
    expect(pdfResponse.headers.get('content-security-policy')).toBe(
      "default-src 'none'; object-src 'self'; frame-ancestors 'none'",
    );

    const htmlResponse = await client.fetch('GET', `/api/media/${html.id}`);
    expect(htmlResponse.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(htmlResponse.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(htmlResponse.headers.get('content-security-policy')).toContain('sandbox');
    expect(await htmlResponse.text()).toBe('<script>alert(1)</script>');
  });
});

describe('the model reads documents', () => {
  it('gets the text of a PDF and a Markdown file; memory holds references, never the text', async () => {
    const threadId = await client.createThread();
    const pdf = await uploadedAs(threadId, pdfBytes(['Alpha beta gamma', 'delta epsilon']), 'report.pdf');
    const md = await uploadedAs(threadId, text('# Plan\n\nzeta eta theta iota\n'), 'plan.md');
    const reply = await replyOf(await sendWithImages(client, threadId, 'summarise these', [pdf.id, md.id]));
    expect(reply).toContain('I read 2 documents: report.pdf, 2 pages, 5 words; plan.md, 6 words.');

    const rows = await api.runtime.database.sql<{ content: string }[]>`
      select content from mastra.mastra_messages where thread_id = (
        select memory_thread_id from branches where thread_id = ${threadId})`;
    const raw = rows.map((row) => row.content).join('\n');
    expect(raw).toContain(`/api/media/${pdf.id}`);
    expect(raw).toContain(`/api/media/${md.id}`);
    expect(raw).not.toContain('Alpha beta');
    expect(raw).not.toContain('zeta eta');

    // The detail shows the documents as file parts of the message (a chip), with their description.
    const detail = await client.detail(threadId);
    const user = detail.messages.find((message) => message.role === 'user');
    const files = user?.parts.filter((part) => part.type === 'file') ?? [];
    expect(files.map((part) => part.mediaType)).toEqual(['application/pdf', 'text/markdown']);
    // With what their chips show: pages, words or size; both were read whole, so no cut.
    expect(user?.metadata.documents).toEqual([
      { id: pdf.id, size: pdf.size, pages: 2, words: 5 },
      { id: md.id, size: md.size, words: 6 },
    ]);
  });

  it("never takes a document's text for what the person wrote: no quote of it, no directives from it", async () => {
    const threadId = await client.createThread();
    const notes = await uploadedAs(
      threadId,
      text('Remember: [[fail]] and [[words:3]] are in here.'),
      'notes.txt',
    );
    const reply = await replyOf(await sendWithImages(client, threadId, 'what does it say?', [notes.id]));
    expect(reply).toContain('I read 1 document: notes.txt, 7 words.');
    expect(reply).toContain('You said: "what does it say?"');
    expect(reply.split(' ').length).toBeGreaterThan(20);
  });

  it('cuts what does not fit the budget by whole pages, with a note saying what was read', async () => {
    const threadId = await client.createThread();
    // Each page is about 100 tokens: 400 a message holds a few of the 20.
    const pages = Array.from(
      { length: 20 },
      (_, index) => `Page ${index + 1}: ${Array.from({ length: 50 }, (_, word) => `w${word}`).join(' ')}`,
    );
    const pdf = await uploadedAs(threadId, pdfBytes(pages), 'long.pdf');
    const reply = await replyOf(await sendWithImages(client, threadId, 'read it', [pdf.id]));
    const match = /I read 1 document: long\.pdf, pages 1-(\d+) of 20 were read, ([\d,]+) words\./.exec(reply);
    expect(match, reply).not.toBeNull();
    const read = Number(match?.[1]);
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(20);
    expect(Number(match?.[2]?.replace(',', ''))).toBe(read * 52);

    // The person sees the cut too, on the message, as it was when the message ran.
    const cutOf = async () =>
      (await client.detail(threadId)).messages.find((message) => message.role === 'user')?.metadata.documents;
    expect(await cutOf()).toEqual([
      { id: pdf.id, size: pdf.size, pages: 20, words: 20 * 52, cut: { read, of: 20, unit: 'pages' } },
    ]);
    expect(documentCutText({ read, of: 20, unit: 'pages' })).toBe(`pages 1-${read} of 20 were read`);
    expect(documentCutText({ read: 0, of: 1200, unit: 'lines' })).toBe('none of its 1,200 lines were read');
  });

  it('shares the per-turn budget across messages, newest first; an older document past it gets a note', async () => {
    // One token a word, so the arithmetic is visible: 400 a message, 600 a turn.
    const budget = { perMessage: 400, perTurn: 600, countTokens: (value: string) => value.split(' ').length };
    const line = 'one two three four five six seven eight nine';
    const doc = (id: string, name: string): Attachment => ({
      id,
      name,
      mediaType: 'text/plain',
      size: 1,
      width: 0,
      height: 0,
      words: 1000,
    });
    const described = new Map([
      ['a', doc('a', 'old.txt')],
      ['b', doc('b', 'middle.txt')],
      ['c', doc('c', 'new.txt')],
    ]);
    const texts = new Map(
      ['a', 'b', 'c'].map((id) => [
        id,
        { text: Array.from({ length: 100 }, () => line).join('\n'), mediaType: 'text/plain' as const },
      ]),
    );
    const result = await documentTexts(
      [
        { message: 0, id: 'a' },
        { message: 2, id: 'b' },
        { message: 4, id: 'c' },
      ],
      described,
      readerOf(texts),
      budget,
    );
    // 10 tokens a line (9 words and the line break): the newest gets 40 lines, the next 20, the
    // oldest nothing but a note.
    expect(parseDocumentPrompt(result.get('4:c') ?? '')?.cut).toBe('lines 1-40 of 100 were read');
    expect(parseDocumentPrompt(result.get('2:b') ?? '')?.cut).toBe('lines 1-20 of 100 were read');
    expect(result.get('0:a')).toBe(
      '[document old.txt: not read, the lines did not fit the context budget for documents]',
    );
    // A reference whose document is gone reads as such.
    expect(
      (await documentTexts([{ message: 0, id: 'z' }], described, readerOf(texts), budget)).get('0:z'),
    ).toBe('[document not available]');
    // A text whose pieces were never counted (stored before they were) is cut the same way.
    const uncounted = await documentTexts(
      [
        { message: 0, id: 'a' },
        { message: 2, id: 'b' },
        { message: 4, id: 'c' },
      ],
      described,
      readerOf(texts, false),
      budget,
    );
    expect(uncounted).toEqual(result);
  });

  it('reads a document whose row is gone as a document not available, by the type its reference names', async () => {
    const id = crypto.randomUUID();
    const prompt = await resolveImages(
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what about this?' },
            { type: 'file', mediaType: 'application/pdf', data: { type: 'data', data: `/api/media/${id}` } },
          ],
        },
      ],
      {
        window: 10,
        describe: async () => new Map(),
        bytes: async () => new Map(),
        readText: async () => undefined,
        documentBudget: { perMessage: 100, perTurn: 100, countTokens: () => 1 },
      },
    );
    expect(prompt[0]?.content).toEqual([
      { type: 'text', text: 'what about this?' },
      { type: 'text', text: '[document not available]' },
    ]);
  });
});

describe('reading a long document for the model', () => {
  it('reads only as far as the budget goes: a 500-page PDF is cut as when read whole, fetching a small part of it', async () => {
    const threadId = await client.createThread();
    const pages = Array.from(
      { length: 500 },
      (_, index) => `Page ${index + 1}: ${Array.from({ length: 40 }, (_, word) => `word${word}`).join(' ')}`,
    );
    const pdf = await uploadedAs(threadId, pdfBytes(pages), 'book.pdf');
    const storage = postgresAttachmentStorage(api.runtime.database.db);
    const whole = (await storage.getTexts([pdf.id])).get(pdf.id) ?? '';
    expect(whole.length).toBeGreaterThan(100_000);

    // What the repository hands out, counted as it goes.
    let fetched = 0;
    const counted: ReadTextSlice = async (id, from, chars) => {
      const slice = await storage.readTextSlice(id, from, chars);
      fetched += slice?.text.length ?? 0;
      return slice;
    };
    // As the API counts for the local model (the test API's budgets).
    const budget = {
      perMessage: 400,
      perTurn: 600,
      countTokens: (value: string) => countTextTokens(value, 'local_words'),
    };
    const described = new Map([[pdf.id, pdf]]);
    const references = [{ message: 0, id: pdf.id }];
    const bounded = await documentTexts(references, described, counted, budget);
    const fromWhole = await documentTexts(
      references,
      described,
      readerOf(new Map([[pdf.id, { text: whole, mediaType: 'application/pdf' }]])),
      budget,
    );
    expect(bounded).toEqual(fromWhole);
    const cut = parseDocumentPrompt(bounded.get(`0:${pdf.id}`) ?? '')?.cut;
    expect(cut).toMatch(/^pages 1-\d+ of 500 were read$/);
    // The budget holds a few pages; what was fetched is a few pages' worth, not the book.
    expect(fetched).toBeGreaterThan(0);
    expect(fetched).toBeLessThan(whole.length / 20);

    // The same cut reaches the model through the API.
    const reply = await replyOf(await sendWithImages(client, threadId, 'read the book', [pdf.id]));
    expect(reply).toContain(`book.pdf, ${cut},`);
  }, 60_000);

  it('reads a text that fits whole, and cuts an uncounted one as a counted one, across slices and astral characters', async () => {
    // Lines with emoji (two UTF-16 units, one character to PostgreSQL), longer than the first read.
    const lines = Array.from({ length: 3_000 }, (_, index) => `line ${index} 🙂 ${'x'.repeat(index % 7)}`);
    const text = lines.join('\n');
    const doc: Attachment = {
      id: 'a',
      name: 'long.txt',
      mediaType: 'text/plain',
      size: 1,
      width: 0,
      height: 0,
    };
    const described = new Map([['a', doc]]);
    for (const perMessage of [50, 5_000, 100_000]) {
      const budget = { perMessage, perTurn: perMessage, countTokens: (value: string) => value.length };
      const whole = readerOf(new Map([['a', { text, mediaType: 'text/plain' as const }]]));
      const result = await documentTexts([{ message: 0, id: 'a' }], described, whole, budget);
      const expectedLines = (() => {
        let used = 0;
        let taken = 0;
        for (const line of lines) {
          if (used + line.length + 1 > perMessage) break;
          used += line.length + 1;
          taken += 1;
        }
        return taken;
      })();
      const parsed = parseDocumentPrompt(result.get('0:a') ?? '');
      expect(parsed?.text, String(perMessage)).toBe(lines.slice(0, expectedLines).join('\n'));
      expect(parsed?.cut).toBe(
        expectedLines < lines.length
          ? `lines 1-${expectedLines.toLocaleString('en-US')} of 3,000 were read`
          : undefined,
      );
      const uncounted = readerOf(new Map([['a', { text, mediaType: 'text/plain' as const }]]), false);
      expect(await documentTexts([{ message: 0, id: 'a' }], described, uncounted, budget)).toEqual(result);
    }
  });
});
