import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverFor } from '../src/chats/turns/driver/choice';
import type { RuntimeDriver } from '../src/chats/turns/driver/types';
import type { ApiClient } from './support/client';
import { readChunks } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * Issue 38: how many times a short send to an idle chat writes to PostgreSQL (each write a
 * statement or a pipeline of them, so about one round trip), on the default `ai-sdk` driver: up to
 * the run's first text delta, and in all until its stream ended (the turn settled, ADR-057).
 * Counted on the API's own connections (`HangWatch.writes`), after a first send prepared the
 * statements. A change that adds a round trip on a send's way fails here.
 */

let database: TestDatabase;
let api: TestApi;
let client: ApiClient;
/** The API's writes to PostgreSQL when each run (by turn id) produced its first text delta. */
const atFirstDelta = new Map<string, number>();

/** The `ai-sdk` driver, noting the write count at its first text delta. */
function noting(inner: RuntimeDriver): RuntimeDriver {
  return {
    ...inner,
    send: async (turn) => {
      const connection = await inner.send(turn);
      async function* events() {
        for await (const event of connection.events) {
          if (event.type === 'chunk' && event.chunk.type === 'text-delta' && !atFirstDelta.has(turn.turnId))
            atFirstDelta.set(turn.turnId, api.runtime.database.watch.writes);
          yield event;
        }
      }
      return { ...connection, events: events() };
    },
    discard: (token) => inner.discard(token),
  };
}

beforeAll(async () => {
  database = await freshDatabase();
  api = await startTestApi(
    database.url,
    {},
    { driver: async (agent, db) => noting(await driverFor('ai-sdk', agent, db)) },
  );
  client = await api.client();
});

afterAll(async () => {
  await api?.close();
  await database?.drop();
});

/** One short send on `threadId`: the writes up to its first text delta, and up to its stream's end. */
async function countedSend(threadId: string, label: string) {
  const before = api.runtime.database.watch.writes;
  const response = await client.send(threadId, `${label} [[words:20]] [[delay:0]]`);
  expect(response.status).toBe(200);
  const turnId = response.headers.get('x-turn-id') ?? '';
  const chunks = await readChunks(response);
  expect(chunks.at(-1)?.type).toBe('finish');
  const total = api.runtime.database.watch.writes - before;
  return { beforeDelta: (atFirstDelta.get(turnId) ?? Number.NaN) - before, total };
}

/** The middle value (the lower one of an even count). */
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? Number.NaN;

describe("a short send's round trips to PostgreSQL (issue 38)", () => {
  it('writes 5 times before its first text delta and at most 11 in all (median of 8 sends on one chat)', async () => {
    const threadId = await client.createThread();
    // The first sends of the process prepare their statements on the pool's connections (each
    // connection asks for a statement's description once) and open them: not counted.
    for (let index = 0; index < 6; index++) await countedSend(threadId, `Warm ${index}`);
    const counts = [];
    for (let index = 0; index < 8; index++) counts.push(await countedSend(threadId, `Send ${index}`));
    // The accept: BEGIN with the lock and its reads; the writes with the claim, `turn.started`
    // and the run's setup and marker (ADR-060); COMMIT. Then the run's window tally and the
    // driver's read of the window. (8 before ADR-060: `turn.started`, the marker and the setup
    // each went on their own after the commit.)
    expect(median(counts.map((count) => count.beforeDelta))).toBe(5);
    // Then the text checkpoints (none to two, written behind the stream: how many depends on how
    // the words meet the event loop) and the settle (three). 13 to 14 before ADR-060.
    expect(median(counts.map((count) => count.total))).toBeLessThanOrEqual(11);
  });
});
