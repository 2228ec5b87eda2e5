import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { ChatExport } from '@chat/contracts';
import { createSql } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, TEST_WEB_ORIGIN } from './support/client';
import { HOSTILE_PDF_KINDS, hostilePdf, pdfBytes } from './support/documents';
import { docxBomb } from './support/docx';
import { upload } from './support/images';
import { childrenOf } from './support/processTable';
import { freshDatabase } from './support/testApi';

/**
 * Hostile documents (D1, ADR-034): a small file whose content expands far, by every path a pattern
 * guard missed (Flate after a lone CR, an indirect /Filter, LZW, Brotli), is refused with a clear
 * reason whatever its filter, twice at once, while the API (its own process here, so its memory is
 * its own) stays within a few hundred megabytes of where it started and keeps answering.
 *
 * Profiles: the quick one runs inside `pnpm test` (each kind expanding to 1 GB, the reading process
 * given 256 MB); the full one is `pnpm faults` (`FAULT_PROFILE=full`: 2 GB each, the default 512 MB).
 */
const full = process.env.FAULT_PROFILE === 'full';
const EXPANDED_MB = full ? 2048 : 1024;
const MB = 1024 * 1024;

let database: TestDatabase;
let api: ApiProcess;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startApiProcess(
    { DATABASE_URL: database.url, ...(full ? {} : { DOCUMENT_READ_MEMORY_MB: '256' }) },
    { captureOutput: process.env.API_TEST_LOG === undefined },
  );
}, 180_000);

afterAll(async () => {
  await api?.stop();
  await database?.drop();
});

/** The API process's resident memory now and at its peak (the kernel's own high-water mark). */
function apiMemory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${api.child.pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

type Refusal = { error: { code: string; message: string } };

describe('a hostile PDF costs the reading process, never the API (D1)', () => {
  it('refuses every kind of expanding PDF, two at once, with a clear reason, the API staying under 300 MB over its start and answering', async () => {
    // Two accounts, so that the two uploads of a kind are read at the same time.
    const clients = await Promise.all([ApiClient.signIn(api.baseUrl), ApiClient.signIn(api.baseUrl)]);
    const threads = await Promise.all(clients.map((client) => client.createThread()));
    const start = apiMemory().rss;
    const answers: string[] = [];
    for (const kind of HOSTILE_PDF_KINDS) {
      const bytes = await hostilePdf(kind, EXPANDED_MB);
      const responses = await Promise.all(
        clients.map((client, index) => upload(client, threads[index] ?? '', bytes, `${kind}.pdf`)),
      );
      expect((await fetch(`${api.baseUrl}/api/health`)).status).toBe(200);
      for (const response of responses) {
        const body = (await response.json()) as Refusal;
        answers.push(
          `${kind} (${(bytes.byteLength / 1024).toFixed(0)} KB): ${response.status} ${body.error?.message}`,
        );
        expect(response.status, kind).toBe(415);
        expect(body.error.code, kind).toBe('unsupported_media_type');
        // Which limit a reading meets first depends on the machine's load; either is the reason.
        expect(body.error.message, kind).toMatch(
          /^This PDF could not be read: reading it (needed too much memory|took too long)\.$/,
        );
      }
    }
    const { peak } = apiMemory();
    expect((peak - start) / MB, answers.join('\n')).toBeLessThan(300);
    // Nothing was stored, and a normal PDF still reads.
    const sql = createSql(database.url, { max: 1 });
    try {
      const [stored] = await sql<{ count: number }[]>`select count(*)::int as count from attachments`;
      expect(stored?.count).toBe(0);
    } finally {
      await sql.end();
    }
    const normal = await upload(
      clients[0] as ApiClient,
      threads[0] ?? '',
      pdfBytes(['Still reads', 'fine']),
      'ok.pdf',
    );
    expect(normal.status, await normal.clone().text()).toBe(201);
    expect(((await normal.json()) as { attachment: { pages: number } }).attachment.pages).toBe(2);
  }, 600_000);
});

describe('a hostile Word document costs the reading process, never the API (D1, ADR-040)', () => {
  it("refuses a zip bomb whose directory lies by its unpacking bound, and XML within that bound that outgrows the reader by the reader's limits, two at once, the API answering", async () => {
    const clients = await Promise.all([ApiClient.signIn(api.baseUrl), ApiClient.signIn(api.baseUrl)]);
    const threads = await Promise.all(clients.map((client) => client.createThread()));
    const start = apiMemory().rss;
    const cases = [
      {
        what: 'a lying zip bomb',
        bytes: await docxBomb(EXPANDED_MB, { declaredBytes: 1024 }),
        refusal: /^This Word document could not be read: it unpacks to more than 64 MB\.$/,
      },
      {
        what: '60 MB of paragraphs',
        bytes: await docxBomb(60, { paragraphs: true }),
        // Which limit a reading meets first depends on the machine's load; either is the reason.
        refusal:
          /^This Word document could not be read: reading it (needed too much memory|took too long)\.$/,
      },
    ];
    for (const { what, bytes, refusal } of cases) {
      const responses = await Promise.all(
        clients.map((client, index) => upload(client, threads[index] ?? '', bytes, 'hostile.docx')),
      );
      expect((await fetch(`${api.baseUrl}/api/health`)).status).toBe(200);
      for (const response of responses) {
        const body = (await response.json()) as Refusal;
        expect(response.status, what).toBe(415);
        expect(body.error.code, what).toBe('unsupported_media_type');
        expect(body.error.message, what).toMatch(refusal);
      }
    }
    expect((apiMemory().peak - start) / MB).toBeLessThan(300);
  }, 300_000);
});

/** The processes the API started that are still there (its document readers). */
const readerProcesses = () => childrenOf(api.child.pid as number);

/** Polls `condition` every 50 ms until it holds; fails after `timeoutMs` (a generous bound). */
async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An export whose user messages carry `pdfs` as their documents, four a message (as for a send). */
function exportWithPdfs(pdfs: readonly Uint8Array[]): ChatExport {
  const at = (second: number) => `2026-12-01T09:00:${String(second).padStart(2, '0')}.000Z`;
  const exchanges = Array.from({ length: Math.ceil(pdfs.length / 4) }, (_, exchange) => exchange);
  const messages: ChatExport['messages'] = exchanges.flatMap((exchange) => [
    {
      id: `u${exchange}`,
      role: 'user' as const,
      createdAt: at(exchange * 2 + 1),
      parts: [
        { type: 'text' as const, text: 'read these' },
        ...pdfs.slice(exchange * 4, exchange * 4 + 4).map((_, index) => ({
          type: 'file' as const,
          mediaType: 'application/pdf' as const,
          document: `d${exchange * 4 + index}`,
          filename: `slow-${exchange * 4 + index}.pdf`,
        })),
      ],
    },
    {
      id: `r${exchange}`,
      role: 'assistant' as const,
      createdAt: at(exchange * 2 + 2),
      parts: [{ type: 'text' as const, text: 'Read.' }],
      model: 'local',
    },
  ]);
  return {
    format: 'queued-turn-chat.export',
    version: 1,
    exportedAt: '2026-12-01T10:00:00.000Z',
    chat: { title: 'Slow documents', createdAt: at(0) },
    shownVersion: 'v1',
    versions: [
      {
        id: 'v1',
        parent: null,
        editOf: null,
        lastShownAt: at(59),
        messages: messages.map((message) => message.id),
      },
    ],
    messages,
    images: [],
    documents: pdfs.map((pdf, index) => ({
      id: `d${index}`,
      name: `slow-${index}.pdf`,
      mediaType: 'application/pdf' as const,
      data: Buffer.from(pdf).toString('base64'),
    })),
    notes: [],
    approvals: [],
  };
}

describe('an import is bounded and stops on hang-up (D1, P2)', () => {
  it('ends the reading of an import whose client hangs up and creates nothing', async () => {
    const client = await ApiClient.signIn(api.baseUrl);
    // Valid PDFs slow to read: each page's content is 64 MB of blanks in 64 KB.
    const slow = await hostilePdf('flate-indirect', 64);
    const body = JSON.stringify(exportWithPdfs(Array.from({ length: 8 }, () => slow)));
    const { port } = new URL(api.baseUrl);
    const answered: string[] = [];
    const hungUp = new Promise<void>((resolve) => {
      const sent = request({
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: '/api/imports',
        headers: {
          cookie: client.cookieHeader,
          origin: TEST_WEB_ORIGIN,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      sent.on('response', (response) => answered.push(String(response.statusCode)));
      sent.on('error', () => resolve());
      sent.on('close', () => resolve());
      sent.end(body);
      // Hang up once the import's first document is being read.
      until(() => readerProcesses().length > 0, 'a reader of the import starts').then(
        () => sent.destroy(),
        () => sent.destroy(),
      );
    });
    await hungUp;
    expect(answered, 'the import answered before it was read').toEqual([]);
    // The reading stops with the request: no reader is left, and none starts for the rest (eight
    // readings one after another would take far longer than this).
    await until(() => readerProcesses().length === 0, 'the readers end after the hang-up', 10_000);
    const stillReading = await new Promise<boolean>((resolve) => {
      // A reader started for the next document would show within this (a spawn is immediate).
      const check = setInterval(() => {
        if (readerProcesses().length > 0) {
          clearInterval(check);
          resolve(true);
        }
      }, 50);
      setTimeout(() => {
        clearInterval(check);
        resolve(false);
      }, 3_000);
    });
    expect(stillReading, 'a reader started after the hang-up').toBe(false);
    // The account's next reading goes at once (the import holds no reading slot) and reads fine.
    const threadId = await client.createThread();
    const normal = await upload(client, threadId, pdfBytes(['after the hang-up']), 'after.pdf');
    expect(normal.status, await normal.clone().text()).toBe(201);
    expect(readerProcesses()).toEqual([]);
    const threads = await client.allThreads();
    expect(threads.map((thread) => thread.title)).not.toContain('Slow documents');
  }, 180_000);
});
