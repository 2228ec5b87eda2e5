import { type ErrorBody, MAX_JSON_BODY_BYTES } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { APP_HEADERS, type ApiClient, TEST_WEB_ORIGIN } from './support/client';
import { postEndlessBody, rawRequest } from './support/rawHttp';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

async function threadCount(): Promise<number> {
  return (await client.allThreads()).length;
}

/** A request with the session cookie and exactly these other headers. */
async function raw(method: string, path: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(`${api.baseUrl}${path}`, {
    method,
    headers: { cookie: client.cookieHeader, ...headers },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: (text ? JSON.parse(text) : null) as ErrorBody,
  };
}

describe('cross-site requests (CSRF)', () => {
  it('refuses unsafe requests without a trusted Origin with 403 forbidden_origin, creating nothing', async () => {
    const before = await threadCount();
    const attempts: Array<[string, Record<string, string>, string | undefined]> = [
      // No Origin at all (a script outside a browser, or an old browser).
      ['no origin', { 'content-type': 'application/json' }, '{}'],
      // A page on another site, or on a same-site subdomain.
      ['foreign origin', { origin: 'https://evil.example', 'content-type': 'application/json' }, '{}'],
      ['sibling port', { origin: 'http://localhost:3999', 'content-type': 'application/json' }, '{}'],
      ['null origin', { origin: 'null', 'content-type': 'application/json' }, '{}'],
      // A no-cors fetch with a text/plain body, and a plain HTML form.
      ['no-cors text', { origin: 'https://evil.example', 'content-type': 'text/plain' }, '{"title":"x"}'],
      [
        'form',
        { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        'title=x',
      ],
      ['cross-site fetch', { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }, '{}'],
      ['same-site fetch', { 'sec-fetch-site': 'same-site', 'content-type': 'application/json' }, '{}'],
    ];
    for (const [what, headers, body] of attempts) {
      const response = await raw('POST', '/api/threads', headers, body);
      expect(response.status, what).toBe(403);
      expect(response.body.error.code, what).toBe('forbidden_origin');
    }
    expect(await threadCount()).toBe(before);
  });

  it('guards every unsafe method and the auth routes too, but not reads', async () => {
    const id = await client.createThread('Untouched');
    const foreign = { origin: 'https://evil.example', 'content-type': 'application/json' };
    for (const [method, path] of [
      ['PATCH', `/api/threads/${id}`],
      ['DELETE', `/api/threads/${id}`],
      ['POST', `/api/threads/${id}/interrupt`],
      ['POST', '/api/auth/sign-in/anonymous'],
      ['POST', '/api/auth/sign-out'],
    ] as const) {
      const response = await raw(method, path, foreign, method === 'DELETE' ? undefined : '{"title":"x"}');
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.error.code).toBe('forbidden_origin');
    }
    expect((await client.detail(id)).thread.title).toBe('Untouched');
    expect((await raw('GET', `/api/threads/${id}`, { origin: 'https://evil.example' })).status).toBe(200);
  });

  it("accepts the app's origin, its loopback twin, and a browser's same-origin fetch", async () => {
    const accepted: Array<Record<string, string>> = [
      { origin: TEST_WEB_ORIGIN },
      { origin: 'http://127.0.0.1:3000' },
      // A browser on the app, behind a proxy whose origin the API does not know.
      { origin: 'https://chat.example', 'sec-fetch-site': 'same-origin' },
    ];
    for (const headers of accepted) {
      const response = await raw(
        'POST',
        '/api/threads',
        { ...headers, 'content-type': 'application/json' },
        '{}',
      );
      expect(response.status, JSON.stringify(headers)).toBe(201);
    }
  });
});

describe('media types', () => {
  it('refuses a body that is not application/json with 415, and accepts bodiless requests', async () => {
    const before = await threadCount();
    for (const type of [
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
      null,
    ]) {
      const headers: Record<string, string> = { origin: TEST_WEB_ORIGIN };
      if (type) headers['content-type'] = type;
      const response = await raw('POST', '/api/threads', headers, '{"title":"x"}');
      expect(response.status, String(type)).toBe(415);
      expect(response.body.error.code).toBe('unsupported_media_type');
    }
    expect(await threadCount()).toBe(before);
    const id = await client.createThread();
    // Stop without a body needs no type.
    const stop = await raw('POST', `/api/threads/${id}/interrupt`, { origin: TEST_WEB_ORIGIN });
    expect(stop.status).toBe(200);
    const json = await raw(
      'POST',
      '/api/threads',
      { ...APP_HEADERS, 'content-type': 'application/json; charset=UTF-8' },
      '{}',
    );
    expect(json.status).toBe(201);
  });
});

describe('bounded bodies', () => {
  it('stops reading a chunked body at the limit with 413 too_large, on a chat route', async () => {
    const id = await client.createThread();
    const result = await postEndlessBody(`${api.baseUrl}/api/threads/${id}/turns`, {
      ...APP_HEADERS,
      cookie: client.cookieHeader,
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error.code).toBe('too_large');
    // The answer came long before the 64 MiB the client was ready to send.
    expect(result.sent).toBeLessThan(16 * 1024 * 1024);
    expect((await client.detail(id)).turnQueue).toEqual({ activeTurn: null, items: [], paused: false });
  });

  it('stops reading at the limit on sign-in, with no session', async () => {
    const result = await postEndlessBody(`${api.baseUrl}/api/auth/sign-in/email`, APP_HEADERS);
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error.code).toBe('too_large');
    expect(result.sent).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses a declared length over the limit without reading it', async () => {
    const response = await client.json<ErrorBody>(
      'POST',
      '/api/threads',
      `"${'x'.repeat(MAX_JSON_BODY_BYTES)}"`,
    );
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('too_large');
  });
});

describe('deeply nested JSON', () => {
  it('is refused with 400 on every route, auth included, before any parser recurses into it', async () => {
    const threadId = await client.createThread();
    const deepArray = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const deepObject = `${'{"a":'.repeat(80_000)}1${'}'.repeat(80_000)}`;
    for (const path of [
      '/api/auth/sign-in/email',
      '/api/auth/sign-up/email',
      '/api/auth/sign-in/anonymous',
      '/api/auth/update-user',
      '/api/threads',
      `/api/threads/${threadId}/turns`,
    ]) {
      for (const body of [deepArray, deepObject]) {
        const answer = await raw('POST', path, APP_HEADERS, body);
        expect(answer.status, path).toBe(400);
        expect(answer.body.error.code, path).toBe('bad_request');
      }
    }
    // The bound is 64 levels: at it a body is read as usual (the thread route ignores extra fields).
    const nested = (levels: number) => `{"extra":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    expect((await raw('POST', '/api/threads', APP_HEADERS, nested(64))).status).toBe(201);
    expect((await raw('POST', '/api/threads', APP_HEADERS, nested(65))).status).toBe(400);
  });
});

describe('text that cannot be stored as sent', () => {
  it('refuses U+0000 and lone surrogates in any text field with 400, changing nothing', async () => {
    const id = await client.createThread('Clean');
    const bad = ['a\u0000b', 'lone \ud800 high', 'lone \udc00 low'];
    for (const text of bad) {
      const cases: Array<[string, string, unknown]> = [
        ['POST', `/api/threads/${id}/turns`, { clientRequestId: crypto.randomUUID(), text }],
        ['POST', `/api/threads/${id}/turns`, { clientRequestId: text, text: 'fine' }],
        ['PATCH', `/api/threads/${id}`, { title: text }],
        ['POST', '/api/threads', { title: text }],
        [
          'POST',
          '/api/auth/sign-up/email',
          { email: 'x@example.test', password: 'long enough pw', name: text },
        ],
      ];
      for (const [method, path, body] of cases) {
        // JSON.stringify writes lone surrogates as \ud800 escapes and NUL as \u0000, as a client would.
        const response = await client.json<ErrorBody>(method, path, JSON.stringify(body));
        expect(response.status, `${method} ${path} ${JSON.stringify(text)}`).toBe(400);
        expect(response.body.error.code).toBe('bad_request');
      }
    }
    const detail = await client.detail(id);
    expect(detail.thread.title).toBe('Clean');
    expect(detail.messages).toEqual([]);
    expect(detail.turnQueue.items).toEqual([]);
  });

  it('refuses bytes that are not UTF-8 with 400', async () => {
    const response = await fetch(`${api.baseUrl}/api/threads`, {
      method: 'POST',
      headers: { ...APP_HEADERS, cookie: client.cookieHeader },
      body: new Uint8Array([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.code).toBe('bad_request');
  });

  it('treats text made only of invisible characters as empty', async () => {
    const id = await client.createThread('Visible');
    for (const text of ['\u200b', '\u200b\u200c\u200d\ufeff', ' \u2060 \u00ad ', '\u3164']) {
      const send = await client.json<ErrorBody>('POST', `/api/threads/${id}/turns`, {
        clientRequestId: crypto.randomUUID(),
        text,
      });
      expect(send.status, JSON.stringify(text)).toBe(400);
      const rename = await client.json<ErrorBody>('PATCH', `/api/threads/${id}`, { title: text });
      expect(rename.status, JSON.stringify(text)).toBe(400);
    }
    const detail = await client.detail(id);
    expect(detail.thread.title).toBe('Visible');
    expect(detail.turnQueue.items).toEqual([]);
    // Joiners inside real text are fine: 👩‍💻 is three code points.
    const emoji = await client.json('PATCH', `/api/threads/${id}`, { title: '👩\u200d💻 notes' });
    expect(emoji.status).toBe(200);
  });
});

describe('addresses that could mean something else on the way', () => {
  it('refuses dot segments in any spelling, backslashes and NUL in the path with 400, changing nothing', async () => {
    const threadId = await client.createThread('Kept as it is');
    const cookie = { cookie: client.cookieHeader, origin: TEST_WEB_ORIGIN };
    const json = { ...cookie, 'content-type': 'application/json' };
    const queue = `/api/threads/${threadId}/queue`;
    const attempts: Array<[string, string, Record<string, string>, string?]> = [
      // Resolved by a URL parser, these became DELETE / PATCH /api/threads/<id>.
      ['DELETE', `${queue}/..`, cookie],
      ['PATCH', `${queue}/..`, json, '{"title":"renamed"}'],
      ['DELETE', `${queue}/%2e%2e`, cookie],
      ['DELETE', `${queue}/.%2E`, cookie],
      ['DELETE', `${queue}/%2E.`, cookie],
      ['DELETE', `${queue}/x/../..`, cookie],
      ['DELETE', `${queue}/..%2f`, cookie],
      ['DELETE', `/api/threads/${threadId}/./queue/..`, cookie],
      ['DELETE', `${queue}\\..`, cookie],
      ['DELETE', `${queue}/..%5c`, cookie],
      ['GET', `/api/threads/${threadId}%00`, cookie],
      ['GET', `/api/threads\\${threadId}`, cookie],
      ['GET', `/api/threads/${threadId}/%zz`, cookie],
    ];
    for (const [method, target, headers, body] of attempts) {
      const answer = await rawRequest(api.baseUrl, method, target, headers, body);
      expect(answer.status, `${method} ${target}`).toBe(400);
      expect(JSON.parse(answer.body).error.code, `${method} ${target}`).toBe('bad_request');
    }
    const detail = await client.detail(threadId);
    expect(detail.thread.title).toBe('Kept as it is');
  });

  it('refuses NUL in a query string with 400 (search included), not a 500', async () => {
    for (const target of ['/api/search?q=a%00b', '/api/threads?cursor=%00']) {
      const answer = await rawRequest(api.baseUrl, 'GET', target, { cookie: client.cookieHeader });
      expect(answer.status, target).toBe(400);
      expect(JSON.parse(answer.body).error.code, target).toBe('bad_request');
    }
    const search = await client.fetch('GET', `/api/search?q=${encodeURIComponent('a\u0000b')}`);
    expect(search.status).toBe(400);
  });
});

describe('security headers', () => {
  it('sends nosniff, a referrer policy and frame-ancestors none on answers, refusals and streams', async () => {
    const id = await client.createThread();
    const responses = [
      await fetch(`${api.baseUrl}/api/health`),
      await client.fetch('GET', '/api/threads'),
      await client.fetch('GET', '/api/nothing-here'),
      await fetch(`${api.baseUrl}/api/threads`),
      await client.fetch('POST', '/api/threads', '{'),
      await client.send(id, 'headers please [[words:2]]'),
    ];
    for (const response of responses) {
      const what = `${response.url} ${response.status}`;
      expect(response.headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), what).toBe('strict-origin-when-cross-origin');
      expect(response.headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-powered-by'), what).toBeNull();
      await response.text();
    }
  });
});
