import { Writable } from 'node:stream';
import { createDatabase, createSql, schema } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app';
import { createLogger, serializeError } from '../src/platform/logger';
import { createRuntime, type Runtime } from '../src/runtime';
import { ApiClient, readChunks } from './support/client';
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
