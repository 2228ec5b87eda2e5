import { schema, type TurnRow } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatAgent } from '../src/chats/turns/driver/mastra/chatAgent';
import { MastraDriver } from '../src/chats/turns/driver/mastra/mastraDriver';
import type { RuntimeDriver } from '../src/chats/turns/driver/types';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readUntilWords,
  type StreamChunk,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { type Script, ScriptedDriver } from './support/scriptedDriver';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * The turn runner against two runtime drivers: the Mastra agent (with the local model) and a
 * scripted driver that knows nothing of Mastra. The same scenarios, the same expectations: what
 * the runner does (stream, settle, interrupt, fail, steer, requeue) does not depend on how a
 * turn is produced. Each driver gets the message texts that make it do what the scenario needs.
 */

type Scenario = 'reply' | 'medium' | 'long' | 'fail' | 'steps';

interface DriverUnderTest {
  name: string;
  create(agent: ChatAgent): Promise<RuntimeDriver>;
  /** The message that makes this driver produce the scenario's reply. */
  text(scenario: Scenario, label: string): string;
}

const scripts: Record<Scenario, Script> = {
  reply: { words: 6, delayMs: 5 },
  medium: { words: 40, delayMs: 40 },
  long: { words: 400, delayMs: 25 },
  fail: { words: 20, delayMs: 5, failAfter: 3 },
  steps: { words: 12, delayMs: 150, stepEvery: 3 },
};

const drivers: DriverUnderTest[] = [
  {
    name: 'the Mastra driver',
    create: (agent) => MastraDriver.create(agent),
    text: (scenario, label) =>
      ({
        reply: `${label} [[words:6]]`,
        medium: `${label} [[words:40]] [[delay:40]]`,
        long: `${label} [[words:400]] [[delay:25]]`,
        fail: `${label} [[words:20]] [[fail-after:3]]`,
        steps: `${label} [[steps:4]] [[delay:150]] [[words:6]]`,
      })[scenario],
  },
  {
    name: 'a scripted driver',
    create: async (agent) =>
      new ScriptedDriver(agent.memory, (text) => scripts[(text.split(' ')[0] ?? 'reply') as Scenario]),
    text: (scenario, label) => `${scenario} ${label}`,
  },
];

/** The same driver, minus steering: it never asks for steers, and says so. */
function withoutSteering(inner: RuntimeDriver): RuntimeDriver {
  return {
    send: async (turn) => {
      const connection = await inner.send({ ...turn, takeSteers: async () => [] });
      return { events: connection.events, steerable: false, close: () => connection.close() };
    },
    discard: (token) => inner.discard(token),
  };
}

let database: TestDatabase;
const apis = new Map<string, { steering: TestApi; plain: TestApi }>();

beforeAll(async () => {
  database = await freshDatabase();
  for (const driver of drivers) {
    apis.set(driver.name, {
      steering: await startTestApi(database.url, {}, { driver: (agent) => driver.create(agent) }),
      plain: await startTestApi(
        database.url,
        {},
        { driver: async (agent) => withoutSteering(await driver.create(agent)) },
      ),
    });
  }
});

afterAll(async () => {
  for (const { steering, plain } of apis.values()) {
    await plain.close();
    await steering.close();
  }
  await database?.drop();
});

async function rowsOf(api: TestApi, threadId: string): Promise<TurnRow[]> {
  return await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
}

async function steer(
  client: ApiClient,
  threadId: string,
  text: string,
): Promise<{ id: string; status: string }> {
  const response = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
    clientRequestId: crypto.randomUUID(),
    text,
    mode: 'steer',
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { turn: { id: string; status: string } }).turn;
}

/** Reads a reply stream until a chunk matches; the rest stays unread. */
async function readUntil(stream: AsyncGenerator<StreamChunk>, match: (chunk: StreamChunk) => boolean) {
  for (;;) {
    const next = await stream.next();
    if (next.done || match(next.value)) return;
  }
}

describe.each(drivers)('the turn runner on $name', (driver) => {
  const api = () => apis.get(driver.name)?.steering as TestApi;
  const text = driver.text;

  it('streams the reply, settles it completed, and the transcript holds what streamed', async () => {
    const client = await api().client();
    const threadId = await client.createThread();
    const { turnId, chunks } = await client.sendAndRead(threadId, text('reply', 'hello'));
    expect(chunks.at(-1)).toEqual({ type: 'finish' });
    const streamed = textOfChunks(chunks);
    expect(streamed.length).toBeGreaterThan(0);
    const detail = await client.detail(threadId);
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(textOfMessage(detail.messages[1])).toBe(streamed);
    expect(detail.messages[1]?.metadata.turnId).toBe(turnId);
    const [row] = await rowsOf(api(), threadId);
    expect(row).toMatchObject({ status: 'completed', partialText: '', leaseExpiresAt: null });
    expect(row?.resumeToken).toMatch(/\S/);
  });

  it('keeps a reply cut by Stop, marked interrupted, and frees the slot (S1, S2)', async () => {
    const client = await api().client();
    const threadId = await client.createThread();
    const reply = await client.send(threadId, text('long', 'stop me'));
    const seen = await readUntilWords(reply, 4);
    const stop = await client.json<{ turn: { status: string } }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(stop.body.turn.status).toBe('interrupted');
    const detail = await client.detail(threadId);
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.messages[1]?.metadata.interrupted).toBe(true);
    expect(textOfMessage(detail.messages[1]).startsWith(seen.trim())).toBe(true);
  });

  it('fails on demand: the turn waits failed at the head with its partial reply (Q11)', async () => {
    const client = await api().client();
    const threadId = await client.createThread();
    const { turnId, chunks } = await client.sendAndRead(threadId, text('fail', 'break'));
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(true);
    const streamed = textOfChunks(chunks);
    expect(streamed.trim().split(/\s+/)).toHaveLength(3);
    const detail = await client.detail(threadId);
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual([[turnId, 'failed']]);
    expect(detail.messages[1]?.metadata).toMatchObject({ failed: true, turnId });
    expect(textOfMessage(detail.messages[1])).toBe(streamed);
  });

  it('takes a steer in at a step boundary: delivered row, rolled transcript (steer)', async () => {
    const client = await api().client();
    const threadId = await client.createThread();
    const reply = await client.send(threadId, text('steps', 'walk'));
    const chunks = iterateChunks(reply);
    await readUntil(chunks, (chunk) => chunk.type === 'text-delta' || chunk.type === 'tool-input-available');
    const sent = await steer(client, threadId, 'turn left');
    expect(sent.status).toBe('steer_pending');
    const rest: StreamChunk[] = [];
    for await (const chunk of chunks) rest.push(chunk);
    const boundary = rest.find((chunk) => chunk.type === 'data-steer-boundary') as
      | { data: { steers: { turnId: string; text: string }[] } }
      | undefined;
    expect(boundary?.data.steers.map((taken) => [taken.turnId, taken.text])).toEqual([
      [sent.id, 'turn left'],
    ]);
    const rows = await rowsOf(api(), threadId);
    expect(rows.find((row) => row.id === sent.id)?.status).toBe('delivered');
    const { messages } = await client.detail(threadId);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(textOfMessage(messages[2])).toBe('turn left');
  });

  it('puts a steer the reply never took in at the head of the queue, before older items', async () => {
    const client = await api().client();
    const threadId = await client.createThread();
    // A reply with no step boundary: a steer can only wait for it to end.
    const reply = await client.send(threadId, text('medium', 'quick'));
    const queued = await client.queued(threadId, text('reply', 'queued'));
    const sent = await steer(client, threadId, text('reply', 'too late'));
    await readChunks(reply);
    const queue = await waitFor(
      () => client.turnQueue(threadId),
      (value) => value.activeTurn === null && value.items.every((item) => item.status === 'queued'),
    );
    expect(queue.items.map((item) => [item.id, item.steer])).toEqual([
      [sent.id, true],
      [queued.id, false],
    ]);
  });

  it('leaves steers to the queue at once when the run cannot take them in', async () => {
    const plain = apis.get(driver.name)?.plain as TestApi;
    const client = await plain.client();
    const threadId = await client.createThread();
    const reply = await client.send(threadId, text('steps', 'no steering'));
    const chunks = iterateChunks(reply);
    await readUntil(chunks, (chunk) => chunk.type === 'text-delta' || chunk.type === 'tool-input-available');
    const sent = await steer(client, threadId, 'turn right');
    // Queued while the reply still runs: nothing can take it in.
    const queue = await waitFor(
      () => client.turnQueue(threadId),
      (value) => value.items[0]?.status === 'queued',
    );
    expect(queue.activeTurn?.status).toBe('running');
    expect(queue.items.map((item) => item.id)).toEqual([sent.id]);
    const rest: StreamChunk[] = [];
    for await (const chunk of chunks) rest.push(chunk);
    expect(rest.some((chunk) => chunk.type === 'data-steer-boundary')).toBe(false);
  });
});
