import type { Thread, ThreadPage } from '@chat/contracts';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_HEADERS, type ApiClient } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

let database: TestDatabase;
let api: TestApi;
let alice: ApiClient;
let bob: ApiClient;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startTestApi(database.url);
  alice = await api.client();
  bob = await api.client();
});

afterAll(async () => {
  await api?.close();
  await database?.drop();
});

const NIL_ID = '00000000-0000-4000-8000-000000000000';

describe('health and sessions', () => {
  it('answers health without a session', async () => {
    const response = await fetch(`${api.baseUrl}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('refuses thread routes without a session with 401 unauthorized', async () => {
    for (const [method, path] of [
      ['GET', '/api/threads'],
      ['POST', '/api/threads'],
      ['GET', `/api/threads/${NIL_ID}`],
      ['POST', `/api/threads/${NIL_ID}/turns`],
    ] as const) {
      const response = await fetch(`${api.baseUrl}${path}`, { method, headers: APP_HEADERS });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect((await response.json()).error.code).toBe('unauthorized');
    }
  });

  it('answers unknown routes with a JSON 404', async () => {
    const { status, body } = await alice.json<{ error: { code: string } }>('GET', '/api/nothing-here');
    expect(status).toBe(404);
    expect(body.error.code).toBe('not_found');
  });
});

describe('threads', () => {
  it('creates, lists newest first, renames and deletes a thread', async () => {
    const first = await alice.createThread('First');
    const second = await alice.createThread();
    const list = await alice.json<ThreadPage>('GET', '/api/threads');
    expect(list.status).toBe(200);
    const ids = list.body.threads.map((thread) => thread.id);
    expect(ids.indexOf(second)).toBeLessThan(ids.indexOf(first));
    expect(list.body.threads.find((thread) => thread.id === second)?.title).toBe('New chat');

    const renamed = await alice.json<Thread>('PATCH', `/api/threads/${first}`, { title: '  Renamed  ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.title).toBe('Renamed');

    const deleted = await alice.fetch('DELETE', `/api/threads/${first}`);
    expect(deleted.status).toBe(204);
    expect((await alice.json('GET', `/api/threads/${first}`)).status).toBe(404);
  });

  it('returns a new thread with an active branch, no messages and an empty queue', async () => {
    const id = await alice.createThread();
    const detail = await alice.detail(id);
    expect(detail.thread.id).toBe(id);
    expect(detail.thread.activeBranchId).toMatch(/^[0-9a-f-]{36}$/);
    expect(detail.messages).toEqual([]);
    expect(detail.turnQueue).toEqual({ activeTurn: null, items: [], paused: false });
  });

  it('names a thread after its first message', async () => {
    const id = await alice.createThread();
    await alice.sendAndRead(id, 'How do tides work near the equator? [[words:3]]');
    expect((await alice.detail(id)).thread.title).toBe('How do tides work near the equator?');
  });

  it("answers 404 on every route of someone else's thread and changes nothing (O3)", async () => {
    const id = await alice.createThread('Private');
    await alice.sendAndRead(id, 'secret [[words:3]]');
    const before = await alice.detail(id);
    const turnId = NIL_ID;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/threads/${id}`],
      ['PATCH', `/api/threads/${id}`, { title: 'mine now' }],
      ['DELETE', `/api/threads/${id}`],
      ['POST', `/api/threads/${id}/turns`, { clientRequestId: 'x', text: 'hi' }],
      ['GET', `/api/threads/${id}/turns/${turnId}/stream`],
      ['POST', `/api/threads/${id}/interrupt`],
      ['POST', `/api/threads/${id}/queue/claim`],
      ['PATCH', `/api/threads/${id}/queue/${turnId}`, { text: 'x' }],
      ['DELETE', `/api/threads/${id}/queue/${turnId}`],
      ['POST', `/api/threads/${id}/queue/${turnId}/send-now`],
      ['GET', `/api/threads/${id}/events`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await bob.json<{ error: { code: string } }>(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect((await bob.allThreads()).map((t) => t.id)).not.toContain(id);
    expect(await alice.detail(id)).toEqual(before);
  });

  it('answers 404 for ids that are not ids', async () => {
    const response = await alice.json<{ error: { code: string } }>('GET', '/api/threads/not-a-uuid');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});

describe('bad input changes nothing', () => {
  it('refuses malformed JSON with 400 bad_request', async () => {
    const response = await alice.json<{ error: { code: string; message: string } }>(
      'POST',
      '/api/threads',
      '{"title": ',
    );
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('bad_request');
    expect(response.body.error.message).toMatch(/JSON/);
  });

  it('refuses a rename without a title and keeps the old one', async () => {
    const id = await alice.createThread('Keep me');
    for (const body of [{}, { title: '' }, { title: 42 }, '[]']) {
      const response = await alice.json<{ error: { code: string } }>('PATCH', `/api/threads/${id}`, body);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('bad_request');
    }
    expect((await alice.detail(id)).thread.title).toBe('Keep me');
  });

  it('refuses sends with missing fields, empty or oversized text, and records no turn', async () => {
    const id = await alice.createThread();
    const cases: Array<[unknown, number, string]> = [
      [{ text: 'no request id' }, 400, 'bad_request'],
      [{ clientRequestId: 'a' }, 400, 'bad_request'],
      [{ clientRequestId: 'a', text: 7 }, 400, 'bad_request'],
      [{ clientRequestId: 'a', text: '   \n\t ' }, 400, 'bad_request'],
      [{ clientRequestId: 'a', text: 'x'.repeat(32_001) }, 413, 'too_large'],
      ['not json', 400, 'bad_request'],
    ];
    for (const [body, status, code] of cases) {
      const response = await alice.json<{ error: { code: string } }>(
        'POST',
        `/api/threads/${id}/turns`,
        body,
      );
      expect(response.status).toBe(status);
      expect(response.body.error.code).toBe(code);
    }
    const detail = await alice.detail(id);
    expect(detail.messages).toEqual([]);
    expect(detail.turnQueue).toEqual({ activeTurn: null, items: [], paused: false });
    expect(detail.thread.title).toBe('New chat');
  });

  it('accepts text of exactly 32,000 characters after trimming', async () => {
    const id = await alice.createThread();
    const response = await alice.send(id, `  ${'y'.repeat(32_000)}  [[words:2]]`.replace('[[words:2]]', ''));
    expect(response.status).toBe(200);
    await response.text();
  });
});

describe('email and password accounts', () => {
  it('signs up, owns threads, and signs in again to the same threads', async () => {
    const email = `person-${crypto.randomUUID()}@example.test`;
    const signUp = await fetch(`${api.baseUrl}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: APP_HEADERS,
      body: JSON.stringify({ email, password: 'correct horse battery', name: 'Person' }),
    });
    expect(signUp.status).toBe(200);
    const cookieOf = (response: Response) =>
      response.headers
        .getSetCookie()
        .map((value) => value.split(';')[0])
        .join('; ');
    const created = await fetch(`${api.baseUrl}/api/threads`, {
      method: 'POST',
      headers: { ...APP_HEADERS, cookie: cookieOf(signUp) },
      body: JSON.stringify({ title: 'Mine' }),
    });
    const thread = (await created.json()) as Thread;

    const wrong = await fetch(`${api.baseUrl}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: APP_HEADERS,
      body: JSON.stringify({ email, password: 'wrong password here' }),
    });
    expect(wrong.status).toBe(401);
    const signIn = await fetch(`${api.baseUrl}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: APP_HEADERS,
      body: JSON.stringify({ email, password: 'correct horse battery' }),
    });
    expect(signIn.status).toBe(200);
    const list = await fetch(`${api.baseUrl}/api/threads`, { headers: { cookie: cookieOf(signIn) } });
    expect(((await list.json()) as ThreadPage).threads.map((t) => t.id)).toEqual([thread.id]);
  });
});
