import { readFileSync } from 'node:fs';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, TEST_WEB_ORIGIN } from './support/client';
import { pngBytes, uploaded } from './support/images';
import { postDeclaredBody, postEndlessBody } from './support/rawHttp';
import { freshDatabase } from './support/testApi';

let database: TestDatabase;
let api: ApiProcess;
let client: ApiClient;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startApiProcess({ DATABASE_URL: database.url });
  client = await ApiClient.signIn(api.baseUrl);
}, 90_000);

afterAll(async () => {
  await api?.stop();
  await database?.drop();
});

/** The API process's resident memory, from the kernel (its own view would include the test's). */
function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  return Number(line?.[1] ?? 0) * 1024;
}

const MB = 1024 * 1024;

describe('an oversized upload', () => {
  it('is refused with 413 too_large while it arrives, without the API growing by more than a few MB', async () => {
    const threadId = await client.createThread();
    const headers = {
      cookie: client.cookieHeader,
      origin: TEST_WEB_ORIGIN,
      'content-type': 'multipart/form-data; boundary=----bound',
    };
    const url = `${api.baseUrl}/api/threads/${threadId}/attachments`;
    // Warm the route up, so what is measured is the refusal, not the first compile.
    await uploaded(client, threadId, pngBytes(10, 10, 100_000));
    await postDeclaredBody(url, headers, 12 * MB);
    const pid = api.child.pid ?? 0;
    const before = residentBytes(pid);
    for (let round = 0; round < 3; round++) {
      const result = await postDeclaredBody(url, headers, 12 * MB);
      expect(result.status).toBe(413);
      expect(JSON.parse(result.body).error.code).toBe('too_large');
      // Answered before the client finished writing: never read whole.
      expect(result.sent).toBeLessThan(12 * MB);
    }
    expect(residentBytes(pid) - before).toBeLessThan(4 * MB);
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
    expect(result.sent).toBeLessThan(16 * MB);
    const detail = await client.detail(threadId);
    expect(detail.messages).toEqual([]);
  }, 60_000);
});
