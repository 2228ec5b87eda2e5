import { MAX_ATTACHMENT_BYTES, refusalMessages } from '@chat/contracts';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, TEST_WEB_ORIGIN } from './support/client';
import { pngBytes } from './support/images';
import {
  abandonedUpload,
  postBytes,
  postDeclaredBody,
  postEndlessBody,
  postWholeBodyClosing,
} from './support/rawHttp';
import { freshDatabase } from './support/testApi';

let database: TestDatabase;
let api: ApiProcess;
let client: ApiClient;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startApiProcess({ DATABASE_URL: database.url }, { captureOutput: true });
  client = await ApiClient.signIn(api.baseUrl);
}, 90_000);

afterAll(async () => {
  await api?.stop();
  await database?.drop();
});

const MB = 1024 * 1024;

describe('an oversized upload', () => {
  it('is refused with 413 too_large while it arrives, before the client is done', async () => {
    const threadId = await client.createThread();
    const headers = {
      cookie: client.cookieHeader,
      origin: TEST_WEB_ORIGIN,
      'content-type': 'multipart/form-data; boundary=----bound',
    };
    const url = `${api.baseUrl}/api/threads/${threadId}/attachments`;
    for (let round = 0; round < 3; round++) {
      // Past the document bound (20 MB), the largest an upload may be.
      const result = await postDeclaredBody(url, headers, 22 * MB);
      expect(result.status).toBe(413);
      expect(JSON.parse(result.body).error.code).toBe('too_large');
      // Answered while the client, paused after 1 MiB, waited: the server did not need the rest.
      expect(result.sent).toBeLessThan(22 * MB);
    }
  }, 60_000);

  it('from a client that goes away part-way is not taken for a database outage', async () => {
    const threadId = await client.createThread();
    const url = `${api.baseUrl}/api/threads/${threadId}/attachments`;
    for (let round = 0; round < 3; round++) {
      await abandonedUpload(url, {
        cookie: client.cookieHeader,
        origin: TEST_WEB_ORIGIN,
        'content-type': 'multipart/form-data; boundary=----bound',
      });
    }
    // The reset is the client's socket, not the database's: the circuit stays closed (opened, it
    // would answer every request 503 until its probe came back) and nothing says the database is
    // away.
    expect((await client.json('GET', `/api/threads/${threadId}`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const said = api.output.filter((line) => /database unreachable|database unavailable/.test(line));
    expect(said).toEqual([]);
  }, 60_000);

  it('without a declared length, stops reading at the bound (chunked)', async () => {
    const threadId = await client.createThread();
    const result = await postEndlessBody(`${api.baseUrl}/api/threads/${threadId}/attachments`, {
      cookie: client.cookieHeader,
      origin: TEST_WEB_ORIGIN,
      'content-type': 'multipart/form-data; boundary=----bound',
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error.code).toBe('too_large');
    expect(result.sent).toBeLessThan(26 * MB);
    const detail = await client.detail(threadId);
    expect(detail.messages).toEqual([]);
  }, 60_000);

  it('refused while its file is still arriving leaves the process running', async () => {
    const threadId = await client.createThread();
    // One well-formed file part whose content never ends: the parser is inside the file when the
    // bound refuses it, and dropping the parser then fails the file's own stream too.
    const opening = Buffer.from(
      '------bound\r\ncontent-disposition: form-data; name="file"; filename="huge.txt"\r\n' +
        'content-type: text/plain\r\n\r\n',
    );
    const result = await postEndlessBody(
      `${api.baseUrl}/api/threads/${threadId}/attachments`,
      {
        cookie: client.cookieHeader,
        origin: TEST_WEB_ORIGIN,
        'content-type': 'multipart/form-data; boundary=----bound',
      },
      25 * MB,
      opening,
    );
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error.code).toBe('too_large');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(api.output.filter((line) => /uncaught exception/.test(line))).toEqual([]);
    expect((await client.json('GET', `/api/threads/${threadId}`)).status).toBe(200);
  }, 60_000);
});

/** A multipart body written by hand (a browser's FormData would not make these). */
function multipart(boundary: string, parts: Array<{ headers: string[]; body: Uint8Array | string }>): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${part.headers.join('\r\n')}\r\n\r\n`));
    chunks.push(typeof part.body === 'string' ? Buffer.from(part.body) : Buffer.from(part.body));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

describe('an upload read as a stream', () => {
  const boundary = 'b';
  const headers = () => ({
    cookie: client.cookieHeader,
    origin: TEST_WEB_ORIGIN,
    'content-type': `multipart/form-data; boundary=${boundary}`,
  });

  it("answers an over-size upload with a 413 too_large that Node's fetch can read", async () => {
    const threadId = await client.createThread();
    for (const megabytes of [22, 30]) {
      const form = new FormData();
      form.append('file', new File([new Uint8Array(megabytes * MB)], 'big.png', { type: 'image/png' }));
      const response = await fetch(`${api.baseUrl}/api/threads/${threadId}/attachments`, {
        method: 'POST',
        headers: { cookie: client.cookieHeader, origin: TEST_WEB_ORIGIN },
        body: form,
      });
      expect(response.status, `${megabytes} MB`).toBe(413);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('too_large');
    }
    // JSON routes too.
    const json = await fetch(`${api.baseUrl}/api/threads`, {
      method: 'POST',
      headers: { cookie: client.cookieHeader, origin: TEST_WEB_ORIGIN, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'x'.repeat(30 * MB) }),
    });
    expect(json.status).toBe(413);
    expect((await client.detail(threadId)).messages).toEqual([]);
  }, 60_000);

  it('refuses a form of 170,000 parts once its parts pass the bound, long before the client is done', async () => {
    const threadId = await client.createThread();
    // About 8.9 MB: within the upload's byte bound, as in the flood that starved every other request.
    const fields = Array.from({ length: 170_000 }, () => ({
      headers: ['content-disposition: form-data; name="a"'],
      body: 'x',
    }));
    const file = {
      headers: ['content-disposition: form-data; name="file"; filename="a.png"', 'content-type: image/png'],
      body: pngBytes(10, 10, 64),
    };
    const body = multipart(boundary, [...fields, file]);
    expect(body.byteLength).toBeLessThan(MAX_ATTACHMENT_BYTES);
    // The writer stops after 1 MiB (some 20,000 parts) and waits: only a server that stops at the
    // part bound answers a body it has not had in full.
    const result = await postBytes(`${api.baseUrl}/api/threads/${threadId}/attachments`, headers(), body, MB);
    expect(result.status).toBe(400);
    expect(JSON.parse(result.body).error.code).toBe('bad_request');
    expect(result.sent).toBeLessThan(body.byteLength);
    expect((await client.json('GET', `/api/threads/${threadId}`)).status).toBe(200);
  }, 60_000);

  it('answers a refusal part-way through the body readably to a client that asked to close the connection', async () => {
    const threadId = await client.createThread();
    const url = `${api.baseUrl}/api/threads/${threadId}/attachments`;
    const manyParts = multipart(
      boundary,
      Array.from({ length: 170_000 }, () => ({
        headers: ['content-disposition: form-data; name="a"'],
        body: 'x',
      })),
    );
    const file = (size: number) =>
      multipart(boundary, [
        {
          headers: [
            'content-disposition: form-data; name="file"; filename="a.txt"',
            'content-type: text/plain',
          ],
          body: new Uint8Array(size).fill(97),
        },
      ]);
    // Curl and simple clients write the whole body before they read: a connection cut after the
    // answer would lose it to a broken pipe.
    const json = { ...headers(), 'content-type': 'application/json' };
    const cases = [
      { name: 'too many parts', url, headers: headers(), body: manyParts, chunked: false, status: 400 },
      {
        name: 'a file past the bound, no length declared',
        url,
        headers: headers(),
        body: file(22 * MB),
        chunked: true,
        status: 413,
      },
      {
        name: 'an import past its bound, no length declared',
        url: `${api.baseUrl}/api/imports`,
        headers: json,
        body: Buffer.from(JSON.stringify({ text: 'x'.repeat(34 * MB) })),
        chunked: true,
        status: 413,
      },
    ];
    for (const { name, url, headers, body, chunked, status } of cases) {
      const result = await postWholeBodyClosing(url, headers, body, { chunked });
      expect(result.error, name).toBeUndefined();
      expect(result.status, name).toBe(status);
      expect(JSON.parse(result.body).error.code, name).toMatch(/^(bad_request|too_large)$/);
    }
    expect((await client.detail(threadId)).messages).toEqual([]);
  }, 120_000);

  it('refuses a file name too long for any file system, and a second file, with 400, storing nothing', async () => {
    const threadId = await client.createThread();
    const image = pngBytes(10, 10, 64);
    const longName = {
      headers: [`content-disposition: form-data; name="file"; filename="${'a'.repeat(20_000)}.png"`],
      body: image,
    };
    const twoFiles = [0, 1].map((index) => ({
      headers: [`content-disposition: form-data; name="file${index}"; filename="${index}.png"`],
      body: image,
    }));
    const refusals: [typeof twoFiles, string][] = [
      [[longName], refusalMessages.bad_request.fileNameTooLong(1024)],
      [twoFiles, refusalMessages.bad_request.oneFile],
    ];
    for (const [parts, message] of refusals) {
      const result = await postBytes(
        `${api.baseUrl}/api/threads/${threadId}/attachments`,
        headers(),
        multipart(boundary, parts),
      );
      expect(result.status).toBe(400);
      expect(JSON.parse(result.body).error).toMatchObject({ code: 'bad_request', message });
    }
    // The same upload with one file and sane headers is taken.
    const one = await postBytes(
      `${api.baseUrl}/api/threads/${threadId}/attachments`,
      headers(),
      multipart(boundary, [
        { headers: ['content-disposition: form-data; name="file"; filename="ok.png"'], body: image },
      ]),
    );
    expect(one.status).toBe(201);
  }, 60_000);
});
