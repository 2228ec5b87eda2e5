import { Writable } from 'node:stream';
import { createDatabase, createSql, schema } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { createLogger, serializeError } from '../src/platform/logger';
import { createRuntime, type Runtime } from '../src/runtime';
import { ApiClient, readChunks, waitFor } from './support/client';
import { freshDatabase, testConfig } from './support/testApi';

const SECRET = 'zebra-orchid-4471';

/** Everything the API logs, at debug level. */
const lines: string[] = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    lines.push(String(chunk));
    done();
  },
});

let database: TestDatabase;
let runtime: Runtime;
let close: () => Promise<void>;
let baseUrl: string;

beforeAll(async () => {
  database = await freshDatabase();
  const config = testConfig(database.url, { LOG_LEVEL: 'debug' });
  runtime = await createRuntime(config, createLogger('debug', capture));
  const server = serve(createApp(runtime.services), { port: 0, hostname: '127.0.0.1', silent: true });
  await server.ready();
  baseUrl = (server.url ?? '').replace(/\/$/, '');
  close = async () => {
    await server.close(true);
    await runtime.close();
  };
});

afterAll(async () => {
  await close?.();
  await database?.drop();
});

describe('the log keeps message text and SQL parameters out', () => {
  it('a failed query is logged with its SQL but without its parameters', async () => {
    const sql = createSql(database.url, { max: 1 });
    try {
      const db = createDatabase(sql);
      // PostgreSQL refuses U+0000 in text: a real failed query carrying the secret as a parameter.
      const error = await db
        .insert(schema.user)
        .values({ id: 'x', name: `${SECRET}\u0000`, email: `${SECRET}@example.test` })
        .then(() => null)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect(String((error as Error).message)).toContain(SECRET);
      const logged = JSON.stringify(serializeError(error));
      expect(logged).not.toContain(SECRET);
      expect(logged).toContain('insert into \\"user\\"');
      // A wrapper that copied the message (h3's HTTPError does, for a route's thrown error).
      const wrapped = new Error((error as Error).message, { cause: error });
      const loggedWrapper = JSON.stringify(serializeError(wrapped));
      expect(loggedWrapper).not.toContain(SECRET);
      expect(loggedWrapper).toContain('insert into \\"user\\"');
    } finally {
      await sql.end();
    }
  });

  it('no request, refusal or failed turn writes what a person typed to the log, at any level', async () => {
    const client = await ApiClient.signIn(baseUrl);
    const threadId = await client.createThread(`title ${SECRET}`);
    await client.json('PATCH', `/api/threads/${threadId}`, { title: `renamed ${SECRET}` });
    await readChunks(await client.send(threadId, `hello ${SECRET} [[words:3]]`));
    // A refusal, a model failure, and a send that would have been a 500 before.
    await client.json('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: 'nul',
      text: `${SECRET}\u0000`,
    });
    await readChunks(await client.send(threadId, `failing ${SECRET} [[fail]]`));
    await client.json('PATCH', `/api/threads/${threadId}`, { title: `\u0000${SECRET}` });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.includes(SECRET))).toEqual([]);
  });
});

describe('the access log: one line per request', () => {
  /** The access-log lines logged since `from`, parsed. */
  const requestsSince = (from: number) =>
    lines
      .slice(from)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'request');

  it('says method, route pattern, status and milliseconds, and never the query, an id, a cookie or a body', async () => {
    const client = await ApiClient.signIn(baseUrl);
    const threadId = await client.createThread('Access log');
    const from = lines.length;
    await client.json('GET', `/api/search?q=${SECRET}`);
    await client.json('PATCH', `/api/threads/${threadId}`, { title: `renamed ${SECRET}` });
    await client.json('GET', '/api/threads/no-such-thread');
    const requests = await waitFor(
      async () => requestsSince(from),
      (found) => found.length >= 3,
    );
    // One whole line each: nothing but these fields.
    const line = (method: string, route: string, status: number) => ({
      level: 30,
      time: expect.any(Number),
      service: 'api',
      msg: 'request',
      method,
      route,
      status,
      ms: expect.any(Number),
    });
    expect(requests).toEqual([
      line('GET', '/api/search', 200),
      line('PATCH', '/api/threads/:id', 200),
      line('GET', '/api/threads/:id', 404),
    ]);
    for (const request of requests) expect(request.ms).toBeGreaterThanOrEqual(0);
    const logged = lines.slice(from).join('\n');
    for (const absent of [SECRET, threadId, 'no-such-thread', 'better-auth.session_token', 'q='])
      expect(logged).not.toContain(absent);
  });

  it('logs a request the guard refuses too (NUL in the query), without the query', async () => {
    const from = lines.length;
    const refused = await fetch(`${baseUrl}/api/threads?x=%00${SECRET}`);
    expect(refused.status).toBe(400);
    const [request] = await waitFor(
      async () => requestsSince(from),
      (found) => found.length >= 1,
    );
    expect(request).toMatchObject({
      method: 'GET',
      route: '/api/threads',
      status: 400,
      ms: expect.any(Number),
    });
    expect(lines.slice(from).join('\n')).not.toContain(SECRET);
  });
});
