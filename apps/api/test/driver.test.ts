import { schema, type TurnRow } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MastraDriver } from '../src/chats/turns/driver/mastra/mastraDriver';
import type { DriverEvent, RuntimeDriver } from '../src/chats/turns/driver/types';
import { assertRunnable } from '../src/chats/turns/running/runRecord';
import { InvariantError } from '../src/platform/errors';
import { type ApiClient, iterateChunks, readChunks, textOfChunks } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * The runtime driver seam's contract, through a real API on a real database: what the runner
 * relies on of any driver, and what it does for a driver that cannot steer.
 */

/** A real driver minus one capability: the Mastra agent that never takes steers in. */
function withoutSteering(inner: RuntimeDriver): RuntimeDriver {
  return {
    send: async (turn) => {
      const connection = await inner.send({ ...turn, takeSteers: async () => [] });
      return { events: connection.events, steerable: false, close: () => connection.close() };
    },
    discard: (token) => inner.discard(token),
  };
}

/** Every event of every run, in order, per turn id: the runner's view of the driver. */
const seen = new Map<string, DriverEvent['type'][]>();
function recording(inner: RuntimeDriver): RuntimeDriver {
  return {
    send: async (turn) => {
      const connection = await inner.send(turn);
      const types: DriverEvent['type'][] = [];
      seen.set(turn.turnId, types);
      async function* events() {
        for await (const event of connection.events) {
          types.push(event.type);
          yield event;
        }
      }
      return { ...connection, events: events() };
    },
    discard: (token) => inner.discard(token),
  };
}

let database: TestDatabase;
let steering: TestApi;
let plain: TestApi;

beforeAll(async () => {
  database = await freshDatabase();
  steering = await startTestApi(
    database.url,
    {},
    { driver: async (agent) => recording(await MastraDriver.create(agent)) },
  );
  plain = await startTestApi(
    database.url,
    {},
    { driver: async (agent) => withoutSteering(await MastraDriver.create(agent)) },
  );
});

afterAll(async () => {
  await plain?.close();
  await steering?.close();
  await database?.drop();
});

async function rowsOf(api: TestApi, threadId: string): Promise<TurnRow[]> {
  return await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition not reached');
}

describe('the runtime driver seam', () => {
  it('streams a run as resume-token, chunks, usage, turn-complete; the token is kept on the turn', async () => {
    const client = await steering.client();
    const threadId = await client.createThread();
    const { turnId } = await client.sendAndRead(threadId, 'hello [[words:3]]');
    const types = seen.get(turnId) ?? [];
    expect(types[0]).toBe('resume-token');
    expect(types.slice(-2)).toEqual(['usage', 'turn-complete']);
    expect(types.slice(1, -2).every((type) => type === 'chunk')).toBe(true);
    const [row] = await rowsOf(steering, threadId);
    expect(row?.resumeToken).toMatch(/\S/);
  });

  it('keeps the resume token of a failed turn too, and emits error', async () => {
    const client = await steering.client();
    const threadId = await client.createThread();
    const { turnId } = await client.sendAndRead(threadId, 'break [[fail]]');
    expect(seen.get(turnId)).toContain('error');
    expect(seen.get(turnId)).not.toContain('turn-complete');
    const [row] = await rowsOf(steering, threadId);
    expect(row?.status).toBe('failed');
    expect(row?.resumeToken).toMatch(/\S/);
  });

  it('emits steer-boundary for a redirected steer', async () => {
    const client = await steering.client();
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'walk [[steps:3]] [[delay:150]] [[words:4]]');
    const chunks = iterateChunks(reply);
    for (;;) if ((await chunks.next()).value?.type === 'tool-input-available') break;
    await steerInto(client, threadId, 'turn left');
    for await (const _ of chunks);
    expect(seen.get(reply.headers.get('x-turn-id') ?? '')).toContain('steer-boundary');
  });

  it('falls back to queueing for a driver that cannot steer: the steer waits at the head, its run gets the reminder', async () => {
    const client = await plain.client();
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'walk [[steps:3]] [[delay:150]] [[words:4]]');
    const chunks = iterateChunks(reply);
    for (;;) if ((await chunks.next()).value?.type === 'tool-input-available') break;
    const queued = await client.queued(threadId, 'an ordinary one [[words:3]]');
    const steerId = await steerInto(client, threadId, 'turn right [[words:8]]');
    // Requeued while the reply still runs: nothing can take it in.
    const queue = await waitFor(
      () => client.turnQueue(threadId),
      (value) => value.items[0]?.status === 'queued',
    );
    expect(queue.activeTurn?.status).toBe('running');
    expect(queue.items.map((item) => item.id)).toEqual([steerId, queued.id]);
    const rest = [];
    for await (const chunk of chunks) rest.push(chunk);
    expect(rest.some((chunk) => chunk.type === 'data-steer-boundary')).toBe(false);

    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.headers.get('x-turn-id')).toBe(steerId);
    expect(textOfChunks(await readChunks(claim))).toMatch(/^\(steered\) You said: "turn right"\./);
  });

  it('refuses to run a turn that was not claimed by the runner (no silent fallback)', async () => {
    const client = await steering.client();
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'hi [[words:2]]');
    const [row] = await rowsOf(steering, threadId);
    if (!row) throw new Error('no turn');
    expect(() => assertRunnable(row, steering.runtime.runnerId)).toThrow(InvariantError);
    expect(() =>
      assertRunnable(
        { ...row, status: 'running', runnerId: steering.runtime.runnerId, userMessageId: null },
        steering.runtime.runnerId,
      ),
    ).toThrow(InvariantError);
    expect(
      assertRunnable(
        { ...row, status: 'running', runnerId: steering.runtime.runnerId },
        steering.runtime.runnerId,
      ),
    ).toBe(row.userMessageId);
  });
});

async function steerInto(client: ApiClient, threadId: string, text: string): Promise<string> {
  const response = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
    clientRequestId: crypto.randomUUID(),
    text,
    mode: 'steer',
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { turn: { id: string } }).turn.id;
}
