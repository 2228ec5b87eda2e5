import { errorCodes } from '@chat/contracts';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { APP_HEADERS, type ApiClient } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

/** A small seeded PRNG (mulberry32): the same run every time, so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values no field accepts: wrong types, empty or invisible, too long, unstorable. */
const BAD_VALUES: unknown[] = [
  42,
  -1,
  null,
  true,
  [],
  {},
  [1, 2],
  '',
  '   ',
  '\u200b\u200d',
  'a\u0000b',
  'lone \ud800',
  'x'.repeat(33_000),
  { nested: { deeper: 'x' } },
];

/** Bodies that are not valid JSON, or JSON no route takes. */
const RAW_BODIES = [
  '{',
  '{"text": "unterminated',
  'not json at all',
  '[]',
  '"just a string"',
  '12',
  'null',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  '{"text":"\\u0000"}',
  '{"title":"\\ud800"}',
];

/** Ids that name nothing of this user: malformed, unknown, or someone else's. */
function foreignIds(foreignThread: string, foreignTurn: string): string[] {
  return [
    foreignThread,
    foreignTurn,
    crypto.randomUUID(),
    'not-an-id',
    '%00',
    '%2e%2e',
    '..%2f..',
    `${'a'.repeat(300)}`,
    "1'%20or%20'1'='1",
    '%F0%9F%92%A9',
    '00000000-0000-0000-0000-000000000000',
  ];
}

interface Route {
  method: string;
  path: (ids: { thread: string; turn: string; message: string }) => string;
  body: boolean;
}

const ROUTES: Route[] = [
  { method: 'POST', path: () => '/api/threads', body: true },
  { method: 'GET', path: ({ thread }) => `/api/threads/${thread}`, body: false },
  { method: 'PATCH', path: ({ thread }) => `/api/threads/${thread}`, body: true },
  { method: 'DELETE', path: ({ thread }) => `/api/threads/${thread}`, body: false },
  { method: 'GET', path: ({ thread }) => `/api/threads/${thread}/events`, body: false },
  { method: 'POST', path: ({ thread }) => `/api/threads/${thread}/turns`, body: true },
  { method: 'GET', path: ({ thread, turn }) => `/api/threads/${thread}/turns/${turn}/stream`, body: false },
  { method: 'POST', path: ({ thread }) => `/api/threads/${thread}/interrupt`, body: false },
  { method: 'POST', path: ({ thread }) => `/api/threads/${thread}/queue/claim`, body: false },
  { method: 'PATCH', path: ({ thread, turn }) => `/api/threads/${thread}/queue/${turn}`, body: true },
  { method: 'DELETE', path: ({ thread, turn }) => `/api/threads/${thread}/queue/${turn}`, body: false },
  {
    method: 'POST',
    path: ({ thread, turn }) => `/api/threads/${thread}/queue/${turn}/send-now`,
    body: false,
  },
  { method: 'POST', path: ({ thread, turn }) => `/api/threads/${thread}/queue/${turn}/move`, body: true },
  { method: 'POST', path: ({ thread }) => `/api/threads/${thread}/queue/merge`, body: true },
  {
    method: 'POST',
    path: ({ thread, message }) => `/api/threads/${thread}/messages/${message}/versions`,
    body: true,
  },
  { method: 'PUT', path: ({ thread }) => `/api/threads/${thread}/active-branch`, body: true },
  {
    method: 'DELETE',
    path: ({ thread, message }) => `/api/threads/${thread}/messages/${message}`,
    body: false,
  },
  { method: 'GET', path: ({ thread }) => `/api/threads/${thread}/export?format=json`, body: false },
  { method: 'POST', path: () => '/api/imports', body: true },
  {
    method: 'POST',
    path: ({ thread, message }) => `/api/threads/${thread}/messages/${message}/fork`,
    body: false,
  },
  { method: 'POST', path: ({ thread }) => `/api/shares/${thread}/continue`, body: false },
];

/** Rows of every table a request could change, and a digest of the chat tables' contents. */
async function snapshot(databaseUrl: string): Promise<Record<string, unknown>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`
      select
        (select count(*)::int from "user") as users,
        (select count(*)::int from session) as sessions,
        (select md5(coalesce(string_agg(t::text, ',' order by t.id), '')) from threads t) as threads,
        (select md5(coalesce(string_agg(b::text, ',' order by b.id), '')) from branches b) as branches,
        -- The running turn's checkpoint columns move on their own: compare what a request could change.
        (select md5(coalesce(string_agg(concat_ws('|', r.id, r.status, r.text, r.client_request_id, r.seq,
          r.branch_id, r.handoff, r.error, r.queue_position), ',' order by r.id), '')) from chat_turn_requests r) as turns,
        (select count(*)::int from message_origins) as origins,
        (select count(*)::int from mastra.mastra_messages) as messages,
        (select count(*)::int from mastra.mastra_threads) as memory_threads`;
    return row ?? {};
  } finally {
    await sql.end();
  }
}

describe('fuzz: malformed bodies and ids across every route', () => {
  it('answers each with a JSON 4xx of the contract and changes nothing', async () => {
    const rand = random(20261130);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;

    // State to aim at: a thread of this user with a reply and a queued turn, and another user's.
    const own = await client.createThread('Own');
    const first = await client.sendAndRead(own, 'a first message [[words:3]]');
    const held = await client.send(own, 'keep running [[words:20000]] [[delay:50]]');
    const queued = await client.queued(own, 'queued [[words:2]]');
    const ownMessage = (await client.detail(own)).messages[0]?.id ?? 'none';
    const stranger = await api.client();
    const foreign = await stranger.createThread('Not yours');
    const foreignTurn = (await stranger.sendAndRead(foreign, 'theirs [[words:2]]')).turnId;
    const databaseUrl = api.runtime.database.url;
    const before = await snapshot(databaseUrl);

    const badIds = foreignIds(foreign, foreignTurn);
    const codes = new Set<string>(errorCodes);
    const failures: string[] = [];
    const requests = 360;
    for (let index = 0; index < requests; index++) {
      const route = pick(ROUTES);
      // Bodiless routes only ever meet ids that are not this user's (with this user's ids they
      // would be valid requests); body routes meet this user's ids too, always with a bad body.
      const ids = route.body
        ? {
            thread: pick([own, ...badIds]),
            turn: pick([queued.id, first.turnId, ...badIds]),
            message: pick([ownMessage, ...badIds]),
          }
        : { thread: pick(badIds), turn: pick(badIds), message: pick(badIds) };
      let body: string | undefined;
      if (route.body || (route.method !== 'GET' && rand() < 0.2)) {
        body =
          rand() < 0.3
            ? pick(RAW_BODIES)
            : JSON.stringify({
                title: pick(BAD_VALUES),
                text: pick(BAD_VALUES),
                clientRequestId: pick(BAD_VALUES),
                branchId: pick(BAD_VALUES),
                turnIds: pick(BAD_VALUES),
                beforeTurnId: pick(BAD_VALUES),
                moveToHead: pick(BAD_VALUES),
              });
      }
      const headers: Record<string, string> = { ...APP_HEADERS, cookie: client.cookieHeader };
      const headerCase = rand();
      if (headerCase < 0.05) headers.origin = 'https://evil.example';
      else if (headerCase < 0.1) headers['content-type'] = 'text/plain';
      const path = route.path(ids);
      const response = await fetch(`${api.baseUrl}${path}`, { method: route.method, headers, body });
      const text = await response.text();
      let code: unknown;
      try {
        code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
      } catch {
        code = undefined;
      }
      if (response.status < 400 || response.status >= 500 || typeof code !== 'string' || !codes.has(code))
        failures.push(
          `${route.method} ${path} ${body?.slice(0, 80)} -> ${response.status} ${text.slice(0, 120)}`,
        );
    }
    // Requests of the same user into other tables: the auth routes take only refusals of the guard.
    for (const raw of RAW_BODIES.slice(0, 3)) {
      const response = await fetch(`${api.baseUrl}/api/auth/sign-in/anonymous`, {
        method: 'POST',
        headers: APP_HEADERS,
        body: raw,
      });
      if (response.status !== 400) failures.push(`sign-in ${raw} -> ${response.status}`);
    }

    expect(failures).toEqual([]);
    expect(await snapshot(databaseUrl)).toEqual(before);
    await client.json('POST', `/api/threads/${own}/interrupt`);
    await held.text();
  }, 180_000);
});
