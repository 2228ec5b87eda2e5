import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import type { ApiClient } from './support/client';
import { ApiClient as C, TEST_WEB_ORIGIN } from './support/client';
import { freshDatabase } from './support/testApi';

let api: ApiProcess;
let client: ApiClient;
beforeAll(async () => {
  const db = await freshDatabase();
  api = await startApiProcess({ DATABASE_URL: db.url });
  client = await C.signIn(api.baseUrl);
}, 60000);

describe('x', () => {
  it('upload', async () => {
    const threadId = await client.createThread();
    const form = new FormData();
    form.append(
      'file',
      new File([new Uint8Array(Number(process.env.MB ?? 12) * 1024 * 1024)], 'big.png', {
        type: 'image/png',
      }),
    );
    try {
      const r = await fetch(`${api.baseUrl}/api/threads/${threadId}/attachments`, {
        method: 'POST',
        headers: { cookie: client.cookieHeader, origin: TEST_WEB_ORIGIN },
        body: form,
      });
      console.log('upload', r.status, await r.text());
    } catch (e) {
      console.log('upload ERR', e, (e as Error).cause);
    }
    try {
      const r = await fetch(`${api.baseUrl}/api/threads`, {
        method: 'POST',
        headers: { cookie: client.cookieHeader, origin: TEST_WEB_ORIGIN, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'x'.repeat(3_000_000) }),
      });
      console.log('json', r.status, await r.text());
    } catch (e) {
      console.log('json ERR', e, (e as Error).cause);
    }
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < Number(process.env.MB ?? 12) * 4; i++) c.enqueue(new Uint8Array(256 * 1024));
        c.close();
      },
    });
    try {
      const r = await fetch(`${api.baseUrl}/api/threads/${threadId}/attachments`, {
        method: 'POST',
        headers: {
          cookie: client.cookieHeader,
          origin: TEST_WEB_ORIGIN,
          'content-type': 'multipart/form-data; boundary=x',
        },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      console.log('chunked', r.status, await r.text());
    } catch (e) {
      console.log('chunked ERR', e, (e as Error).cause);
    }
    expect(1).toBe(1);
    await api.stop();
  });
});
