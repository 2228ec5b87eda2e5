import { request as httpRequest } from 'node:http';
import { MAX_JSON_BODY_BYTES } from '@chat/contracts';
import { expect, test } from './fixtures';
import { ProxyGuest, rawRequest } from './support/rawHttp';

/** What the web app's server answers for requests a page never makes (raw HTTP, exact paths). */
test.describe('the web proxy and odd requests', () => {
  test('refuses dot segments and NUL in an /api path with a JSON 400 and changes nothing', async ({
    baseURL,
  }) => {
    const guest = await ProxyGuest.signIn(baseURL as string);
    const threadId = await guest.createThread();
    const base = `/api/threads/${threadId}`;
    const unsafe = [
      `${base}/queue/..`,
      `${base}/queue/%2e%2e`,
      `${base}/queue/%2E%2e`,
      `${base}/queue/.%2E`,
      `${base}/messages/..`,
      `${base}/queue/./..`,
    ];
    for (const path of unsafe) {
      const response = await guest.request('DELETE', path);
      expect(response.status, path).toBe(400);
      expect(response.json().error?.code, path).toBe('bad_request');
    }
    for (const path of ['/api/threads/%00', `${base}%00`, `${base}?x=%00`]) {
      const response = await guest.request('GET', path);
      expect(response.status, path).toBe(400);
      expect(response.json().error?.code, path).toBe('bad_request');
    }
    // The thread the first request would have deleted is still there.
    expect((await guest.request('GET', base)).status).toBe(200);
  });

  test('answers TRACE and unknown methods with a JSON 405', async ({ baseURL }) => {
    for (const [method, path] of [
      ['TRACE', '/api/threads'],
      ['TRACE', '/'],
      ['PROPFIND', '/api/threads'],
    ] as const) {
      const response = await rawRequest(baseURL as string, method, path);
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.json().error?.code).toBe('method_not_allowed');
      expect(response.headers.allow).toBeTruthy();
    }
  });

  test('gives look-alike API addresses a JSON 404 and pages a 405 for writes, never the app', async ({
    baseURL,
  }) => {
    for (const [method, path, status] of [
      ['PATCH', '//api/threads', 404],
      ['DELETE', '//api/threads', 404],
      ['PATCH', '/API/threads', 404],
      ['DELETE', '/Api/threads/x', 404],
      ['GET', '//api/threads', 404],
      ['POST', '/', 405],
      ['DELETE', '/chat/anything', 405],
    ] as const) {
      const response = await rawRequest(baseURL as string, method, path);
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(response.headers['content-type'], `${method} ${path}`).toContain('application/json');
      expect(response.text).not.toContain('<html');
    }
  });

  test('answers a missing build file with a 404 that is never cached as immutable', async ({ baseURL }) => {
    for (const path of ['/_nuxt/', '/_nuxt/missing.js', '/_nuxt/missing', '/_nuxt/a/b']) {
      const response = await rawRequest(baseURL as string, 'GET', path, { headers: { accept: 'text/html' } });
      expect(response.status, path).toBe(404);
      expect(response.headers['cache-control'] ?? '', path).not.toContain('immutable');
    }
  });

  test('refuses a body with 413 as soon as it passes the limit, without waiting for its end', async ({
    baseURL,
  }) => {
    const { hostname, port } = new URL(baseURL as string);
    // A chunked upload (no declared length) that never finishes: only counting bytes on the way
    // can answer it.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: hostname,
          port,
          method: 'POST',
          path: '/api/auth/sign-in/email',
          headers: { 'content-type': 'application/json', origin: baseURL as string },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => {
            stop();
            resolve({ status: res.statusCode ?? 0, body });
          });
        },
      );
      req.on('error', () => {});
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      const pump = setInterval(() => {
        if (sent > MAX_JSON_BODY_BYTES * 4) return; // enough; the request stays open
        req.write(chunk);
        sent += chunk.length;
      }, 5);
      const deadline = setTimeout(() => {
        stop();
        reject(new Error('no answer within 10 s of a body past the limit'));
      }, 10_000);
      function stop() {
        clearInterval(pump);
        clearTimeout(deadline);
        req.destroy();
      }
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('too_large');
  });

  test('answers an over-size upload with a 413 that a fetch client can read (the rest is read and thrown away)', async ({
    baseURL,
  }) => {
    const origin = baseURL as string;
    for (const megabytes of [12, 30]) {
      const form = new FormData();
      form.append(
        'file',
        new File([new Uint8Array(megabytes * 1024 * 1024)], 'big.png', { type: 'image/png' }),
      );
      const response = await fetch(`${origin}/api/threads/${crypto.randomUUID()}/attachments`, {
        method: 'POST',
        headers: { origin },
        body: form,
      });
      expect(response.status, `${megabytes} MB`).toBe(413);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('too_large');
    }
    const json = await fetch(`${origin}/api/threads`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'x'.repeat(30 * 1024 * 1024) }),
    });
    expect(json.status).toBe(413);
  });
});
