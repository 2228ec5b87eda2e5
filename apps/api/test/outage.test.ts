import type { ErrorBody, ThreadDetail } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, readChunks, textOfChunks, waitFor } from './support/client';
import { OwnedPostgres } from './support/faults/ownedPostgres';

/** A PostgreSQL server of this test's own, which it stops and starts again on the same port. */
let server: OwnedPostgres | undefined;
let api: ApiProcess | undefined;

beforeAll(async () => {
  server = await OwnedPostgres.start();
  // A short lease: the orphan sweeper runs every 750 ms, so an outage meets it many times.
  api = await startApiProcess(
    { DATABASE_URL: server.databaseUrl, TURN_LEASE_MS: '1500', LOCAL_MODEL_DELAY_MS: '20' },
    { captureOutput: true },
  );
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await server?.dispose();
});

/** Written into emails, passwords and messages: it must never reach a log line. */
const SECRET = 'quokka-lantern-9130';
const EMAIL = `${SECRET}@example.test`;

/**
 * How long a request may take to be refused while the database is down. The target is 2 s (the
 * connect timeout, then the open circuit answers at once); the bound is looser because a loaded
 * CI machine (two cores, several test files at once) adds its own delays.
 */
const REFUSAL_BOUND_MS = 5_000;

/** One request during the outage: how long it took and what it answered. */
async function timedRefusal(name: string, request: () => Promise<Response>) {
  const startedAt = Date.now();
  const response = await request();
  const text = await response.text();
  return {
    name,
    ms: Date.now() - startedAt,
    status: response.status,
    code: text ? ((JSON.parse(text) as Partial<ErrorBody>).error?.code ?? null) : null,
    retryAfter: response.headers.get('retry-after'),
  };
}

describe('a database outage', () => {
  it('answers every route, auth included, with 503 unavailable and Retry-After within the bound for as long as it lasts, stays up, and recovers by itself with nothing accepted lost', async () => {
    if (!api || !server) throw new Error('not started');
    const baseUrl = api.baseUrl;
    const client = await ApiClient.signIn(baseUrl);
    const threadId = await client.createThread('Through an outage');
    const account = ApiClient.anonymousVisitor(baseUrl);
    expect(
      (await account.auth('sign-up/email', { email: EMAIL, password: `${SECRET}-pw`, name: '' })).status,
    ).toBe(200);
    const running = await client.send(threadId, 'a long reply [[words:3000]]');
    expect(running.status).toBe(200);
    const queued = [
      await client.queued(threadId, 'queued before the outage 1 [[words:3]]'),
      await client.queued(threadId, 'queued before the outage 2 [[words:3]]'),
    ];
    void running.text().catch(() => {});
    // A page showing the thread follows its events.
    const events = await client.fetch('GET', `/api/threads/${threadId}/events`);
    expect(events.status).toBe(200);
    const eventsEnded = events.text().then(
      () => 'ended',
      () => 'broken',
    );

    await server.stop();

    const visitor = () => ApiClient.anonymousVisitor(baseUrl);
    const requests: Array<[string, () => Promise<Response>]> = [
      // First, while nothing has failed yet: better-auth itself meets the database error.
      [
        'sign-up',
        () =>
          visitor().fetch('POST', '/api/auth/sign-up/email', {
            email: EMAIL,
            password: `${SECRET}-pw2`,
            name: '',
          }),
      ],
      [
        'sign-in',
        () => visitor().fetch('POST', '/api/auth/sign-in/email', { email: EMAIL, password: `${SECRET}-pw` }),
      ],
      ['guest sign-in', () => visitor().fetch('POST', '/api/auth/sign-in/anonymous', {})],
      ['session', () => client.fetch('GET', '/api/auth/get-session')],
      ['thread list', () => client.fetch('GET', '/api/threads')],
      ['thread detail', () => client.fetch('GET', `/api/threads/${threadId}`)],
      [
        'send',
        () =>
          client.fetch('POST', `/api/threads/${threadId}/turns`, {
            clientRequestId: crypto.randomUUID(),
            text: `during ${SECRET}`,
          }),
      ],
      ['rename', () => client.fetch('PATCH', `/api/threads/${threadId}`, { title: `renamed ${SECRET}` })],
      ['account', () => account.fetch('GET', '/api/account')],
    ];
    // Several rounds over ~12 s: a driver that backs off between reconnects (postgres.js waits up
    // to 20 s) shows only after the first failures.
    const outageStartedAt = Date.now();
    const answers: Awaited<ReturnType<typeof timedRefusal>>[] = [];
    for (const [name, request] of requests) answers.push(await timedRefusal(name, request));
    while (Date.now() - outageStartedAt < 12_000) {
      answers.push(...(await Promise.all(requests.map(([name, request]) => timedRefusal(name, request)))));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    // The open event stream was ended, so the page reconnects, meets the 503 and says so.
    expect(
      await Promise.race([eventsEnded, new Promise((resolve) => setTimeout(() => resolve('open'), 5_000))]),
    ).toBe('ended');
    expect((await client.fetch('GET', `/api/threads/${threadId}/events`)).status).toBe(503);
    const wrong = answers.filter(
      (answer) =>
        answer.status !== 503 ||
        answer.code !== 'unavailable' ||
        answer.retryAfter === null ||
        answer.ms >= REFUSAL_BOUND_MS,
    );
    expect(wrong).toEqual([]);
    const ready = await fetch(`${baseUrl}/api/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as ErrorBody).error.code).toBe('unavailable');
    expect((await fetch(`${baseUrl}/api/health`)).status).toBe(200);
    // Background work (the orphan sweeper every 750 ms, heartbeats, the signals check) met the
    // outage all along; the process stays up.
    expect(api.child.exitCode).toBeNull();
    expect(api.child.signalCode).toBeNull();

    await server.resume();

    await waitFor(
      async () => (await fetch(`${baseUrl}/api/ready`)).status,
      (status) => status === 200,
      30_000,
    );
    // Every route works again by itself (the circuit closes once its probe reaches the database).
    await waitFor(
      async () => (await client.fetch('GET', '/api/threads')).status,
      (status) => status === 200,
      10_000,
    );
    expect((await visitor().fetch('POST', '/api/auth/sign-in/anonymous', {})).status).toBe(200);
    expect((await visitor().auth('sign-in/email', { email: EMAIL, password: `${SECRET}-pw` })).status).toBe(
      200,
    );
    // The reply that was running went on once its heartbeat reached the database again; Stop
    // ends it, and both queued sends are still there.
    const stop = await client.json<{ turn: { status: string } | null }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(stop.status).toBe(200);
    const detail = await waitFor(
      () => client.detail(threadId),
      (d: ThreadDetail) => d.turnQueue.activeTurn === null,
      30_000,
    );
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual(
      queued.map((turn) => [turn.id, 'queued']),
    );
    // The Stop paused the queue (S3). Resumed, they run, one claim at a time, and a new send works.
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    for (const turn of queued) {
      const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
      expect(claim.status).toBe(200);
      expect(claim.headers.get('x-turn-id')).toBe(turn.id);
      await readChunks(claim);
    }
    const after = await client.sendAndRead(threadId, 'after the outage [[words:12]]');
    expect(textOfChunks(after.chunks)).toContain('after the outage');
    const final = await client.detail(threadId);
    const userTexts = final.messages
      .filter((message) => message.role === 'user')
      .map((message) => message.parts.map((part) => String(part.text ?? '')).join(''));
    expect(userTexts).toEqual([
      'a long reply [[words:3000]]',
      'queued before the outage 1 [[words:3]]',
      'queued before the outage 2 [[words:3]]',
      'after the outage [[words:12]]',
    ]);
  }, 180_000);

  it('ends open event streams when the database goes away, even when nobody asks anything, so pages say they are reconnecting', async () => {
    if (!api || !server) throw new Error('not started');
    const client = await ApiClient.signIn(api.baseUrl);
    const threadId = await client.createThread('Watched');
    const events = await client.fetch('GET', `/api/threads/${threadId}/events`);
    expect(events.status).toBe(200);
    const ended = events.text().then(
      () => 'ended',
      () => 'broken',
    );
    await server.stop();
    // No request: the API's own signals check (every 2 s) meets the outage and opens the circuit.
    const outcome = await Promise.race([
      ended,
      new Promise((resolve) => setTimeout(() => resolve('open'), 10_000)),
    ]);
    await server.resume();
    expect(outcome).toBe('ended');
    await waitFor(
      async () => (await client.fetch('GET', `/api/threads/${threadId}/events`)).status,
      (status) => status === 200,
      30_000,
    );
  }, 90_000);

  it('logged all of it through the one JSON logger, with no email, password, message text or SQL parameter in any line', () => {
    if (!api) throw new Error('not started');
    const lines = api.output.filter((line) => line.trim() !== '');
    // The outage was logged at warn: the circuit's opening (whatever met the outage first, a
    // request or the signals check), and a request's own failure when one met it before the
    // circuit opened ...
    expect(lines.some((line) => line.includes('database unreachable'))).toBe(true);
    // ... every line is the logger's JSON (no library printing its own dump beside it) ...
    expect(lines.filter((line) => !isJsonObject(line))).toEqual([]);
    // ... and nothing anyone typed, nor a query's parameters, is in any of them.
    expect(lines.filter((line) => line.includes(SECRET))).toEqual([]);
  });
});

function isJsonObject(line: string): boolean {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}
