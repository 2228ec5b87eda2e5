import type { ErrorBody, ThreadPage } from '@chat/contracts';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
let databaseUrl: string;
useTestApi((started) => {
  ({ api, client } = started);
  databaseUrl = started.api.runtime.database.url;
});

describe('the thread list pages', () => {
  it('pages newest first with limit and cursor, default 50, and ends with nextCursor null', async () => {
    const created: string[] = [];
    for (let index = 0; index < 57; index++) created.push(await client.createThread(`Thread ${index}`));
    const newestFirst = [...created].reverse();

    const first = await client.threadPage();
    expect(first.threads.map((thread) => thread.id)).toEqual(newestFirst.slice(0, 50));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.threadPage({ cursor: first.nextCursor ?? '' });
    expect(second.threads.map((thread) => thread.id)).toEqual(newestFirst.slice(50));
    expect(second.nextCursor).toBeNull();

    // Small pages walk the same order with no gap and no repeat.
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.threadPage({ limit: 10, cursor });
      expect(page.threads.length).toBeLessThanOrEqual(10);
      walked.push(...page.threads.map((thread) => thread.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(walked).toEqual(newestFirst);
    // A page that is exactly the rest has no next page.
    expect((await client.threadPage({ limit: 57 })).nextCursor).toBeNull();
  });

  it('keeps threads with the same timestamp apart by id', async () => {
    const other = await api.client();
    const ids = [await other.createThread(), await other.createThread(), await other.createThread()];
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql`update threads set updated_at = '2030-01-01T00:00:00.123456Z' where id = any(${ids})`;
    } finally {
      await sql.end();
    }
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await other.threadPage({ limit: 1, cursor });
      walked.push(...page.threads.map((thread) => thread.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(walked).toEqual([...ids].sort().reverse());
  });

  it('refuses limits outside 1..200 and cursors it did not give out with 400', async () => {
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=1.5',
      'cursor=',
      'cursor=not-a-cursor',
      `cursor=${Buffer.from('2030-13-01T00:00:00.000000Z|00000000-0000-4000-8000-000000000000').toString('base64url')}`,
      `cursor=${Buffer.from("x'; drop table threads; --|y").toString('base64url')}`,
    ]) {
      const response = await client.json<ErrorBody>('GET', `/api/threads?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('bad_request');
    }
    const max = await client.json<ThreadPage>('GET', '/api/threads?limit=200');
    expect(max.status).toBe(200);
  });
});
