import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { APP_HEADERS, ApiClient, readChunks } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/** Each limit small, in a window short enough to wait out, long enough for a loaded machine. */
const WINDOW_MS = 5_000;
const LIMITS = {
  RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
  RATE_LIMIT_GUESTS_PER_IP: '3',
  RATE_LIMIT_SIGN_INS_PER_IP: '2',
  RATE_LIMIT_THREADS_PER_ACCOUNT: '3',
  RATE_LIMIT_SENDS_PER_ACCOUNT: '4',
  RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '2',
};

let database: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestApi;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startTestApi(database.url, LIMITS);
});

afterAll(async () => {
  await api?.close();
  await database?.drop();
});

const waitOutWindow = () => new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 100));

/** Signs a guest in as coming from `address` (through the local proxy, which the API trusts). */
async function signInFrom(address: string): Promise<Response> {
  return await fetch(`${api.baseUrl}/api/auth/sign-in/anonymous`, {
    method: 'POST',
    headers: { ...APP_HEADERS, 'x-forwarded-for': address },
    body: '{}',
  });
}

async function expectLimited(response: Response, maxRetryAfter = Math.ceil(WINDOW_MS / 1000)): Promise<void> {
  expect(response.status).toBe(429);
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
}

async function userCount(): Promise<number> {
  const postgres = (await import('postgres')).default;
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from "user"`;
    return row?.count ?? 0;
  } finally {
    await sql.end();
  }
}

describe('rate limits', () => {
  it('limits guest accounts per address, creates none past it, and resets', async () => {
    for (let index = 0; index < 3; index++) expect((await signInFrom('203.0.113.7')).status).toBe(200);
    const before = await userCount();
    await expectLimited(await signInFrom('203.0.113.7'));
    expect(await userCount()).toBe(before);
    // Another address has its own count; a forged entry left of the proxy's does not help.
    expect((await signInFrom('203.0.113.8')).status).toBe(200);
    await expectLimited(await signInFrom('198.51.100.1, 203.0.113.7'));
    await waitOutWindow();
    expect((await signInFrom('203.0.113.7')).status).toBe(200);
  });

  it('limits password sign-ins and sign-ups per address, and resets', async () => {
    const attempt = (path: string) =>
      fetch(`${api.baseUrl}/api/auth/${path}`, {
        method: 'POST',
        headers: { ...APP_HEADERS, 'x-forwarded-for': '192.0.2.50' },
        body: JSON.stringify({ email: 'nobody@example.test', password: 'wrong password', name: 'N' }),
      });
    expect((await attempt('sign-in/email')).status).toBe(401);
    expect((await attempt('sign-in/email')).status).toBe(401);
    await expectLimited(await attempt('sign-up/email'));
    await expectLimited(await attempt('sign-in/email'));
    await waitOutWindow();
    expect((await attempt('sign-in/email')).status).toBe(401);
  });

  it('limits thread creation per account, and resets', async () => {
    const client = await ApiClient.signIn(api.baseUrl);
    for (let index = 0; index < 3; index++) await client.createThread();
    await expectLimited(await client.fetch('POST', '/api/threads', {}));
    expect((await client.allThreads()).length).toBe(3);
    // The limit is the account's: another account is not affected.
    const other = await ApiClient.signIn(api.baseUrl);
    expect((await other.fetch('POST', '/api/threads', {})).status).toBe(201);
    await waitOutWindow();
    expect((await client.fetch('POST', '/api/threads', {})).status).toBe(201);
  });

  it('limits sends per account, records none past it, and resets', async () => {
    const client = await ApiClient.signIn(api.baseUrl);
    const threadId = await client.createThread();
    const first = await client.send(threadId, 'a long one [[words:400]] [[delay:20]]');
    expect(first.status).toBe(200);
    for (let index = 0; index < 3; index++) await client.queued(threadId, `queued ${index} [[words:2]]`);
    await expectLimited(await client.send(threadId, 'one too many'));
    expect((await client.turnQueue(threadId)).items).toHaveLength(3);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await first.text();
    await waitOutWindow();
    const later = await client.send(threadId, 'after the window [[words:2]]');
    expect(later.status).toBe(202);
    await later.text();
  });

  it('limits turns running at once per account, across threads, and frees the slot when one ends', async () => {
    const client = await ApiClient.signIn(api.baseUrl);
    const [a, b, c] = [await client.createThread(), await client.createThread(), await client.createThread()];
    const slow = 'slow [[words:400]] [[delay:20]]';
    const runA = await client.send(a, slow);
    const runB = await client.send(b, slow);
    expect([runA.status, runB.status]).toEqual([200, 200]);
    const third = await client.send(c, 'a third at once [[words:2]]');
    // Turns end in seconds, so that is what it suggests waiting.
    await expectLimited(third, 5);
    // Nothing of the refused send was kept.
    expect((await client.detail(c)).messages).toEqual([]);
    expect((await client.turnQueue(c)).items).toEqual([]);
    await client.json('POST', `/api/threads/${a}/interrupt`);
    await runA.text();
    const afterStop = await client.send(c, 'now there is room [[words:2]]');
    expect(afterStop.status).toBe(200);
    await readChunks(afterStop);
    await client.json('POST', `/api/threads/${b}/interrupt`);
    await runB.text();
  });
});

describe('rate limits across API processes', () => {
  const LONG_WINDOW_MS = 60_000;
  const limited = (response: Response) => expectLimited(response, LONG_WINDOW_MS / 1000);
  let processes: ApiProcess[] = [];

  beforeAll(async () => {
    // A window that outlasts the cases on a busy machine: here the count is asserted, not its reset.
    const env = { ...LIMITS, RATE_LIMIT_WINDOW_MS: String(LONG_WINDOW_MS), DATABASE_URL: database.url };
    processes = await Promise.all([startApiProcess(env), startApiProcess(env)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(processes.map((process) => process.stop()));
  });

  it('holds one account to its sends however its requests are spread over two processes on one database', async () => {
    const [a, b] = processes as [ApiProcess, ApiProcess];
    const viaA = await ApiClient.signIn(a.baseUrl);
    const viaB = viaA.via(b.baseUrl);
    const threadId = await viaA.createThread();
    const first = await viaA.send(threadId, 'a long one [[words:400]] [[delay:20]]');
    expect(first.status).toBe(200);
    // Four sends in the window, alternating processes: the fifth is refused on either.
    expect((await viaB.send(threadId, 'queued 1 [[words:2]]')).status).toBe(202);
    expect((await viaA.send(threadId, 'queued 2 [[words:2]]')).status).toBe(202);
    expect((await viaB.send(threadId, 'queued 3 [[words:2]]')).status).toBe(202);
    await limited(await viaA.send(threadId, 'one too many'));
    await limited(await viaB.send(threadId, 'one too many'));
    expect((await viaA.turnQueue(threadId)).items).toHaveLength(3);
    await viaB.json('POST', `/api/threads/${threadId}/interrupt`);
    await first.text();
  });

  it('holds one address to its guest accounts across both processes', async () => {
    const signIn = (baseUrl: string) =>
      fetch(`${baseUrl}/api/auth/sign-in/anonymous`, {
        method: 'POST',
        headers: { ...APP_HEADERS, 'x-forwarded-for': '203.0.113.77' },
        body: '{}',
      });
    const [a, b] = processes as [ApiProcess, ApiProcess];
    const statuses = [];
    for (const process of [a, b, a]) statuses.push((await signIn(process.baseUrl)).status);
    expect(statuses).toEqual([200, 200, 200]);
    await limited(await signIn(b.baseUrl));
    await limited(await signIn(a.baseUrl));
  });
});
