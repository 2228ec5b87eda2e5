import type { TestDatabase } from '@chat/db/testing';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import {
  ApiClient,
  readChunks,
  readUntilWords,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { freshDatabase } from './support/testApi';

let database: TestDatabase;
const processes: ApiProcess[] = [];

beforeAll(async () => {
  database = await freshDatabase();
});

afterAll(async () => {
  await Promise.all(processes.map((api) => api.stop()));
  await database?.drop();
});

async function start(): Promise<ApiProcess> {
  const api = await startApiProcess({
    DATABASE_URL: database.url,
    TURN_LEASE_MS: '1500',
    LOCAL_MODEL_DELAY_MS: '25',
  });
  processes.push(api);
  return api;
}

describe('a crash mid-turn loses nothing that was accepted', () => {
  it('settles the orphaned turn as interrupted with its checkpointed text, frees the lock, keeps the queue', async () => {
    const first = await start();
    const client = await ApiClient.signIn(first.baseUrl);
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'a long story [[words:2000]]');
    expect(reply.status).toBe(200);
    const turnId = reply.headers.get('x-turn-id') ?? '';
    // Past at least one heartbeat (every lease / 3), so some text is checkpointed.
    const seen = await readUntilWords(reply, 40);
    const queued = await client.queued(threadId, 'after the crash [[words:12]]');

    await first.kill();

    const second = await start();
    const again = client.via(second.baseUrl);
    const detail = await waitFor(
      () => again.detail(threadId),
      (d) => d.turnQueue.activeTurn === null,
      15_000,
    );
    expect(detail.turnQueue.items.map((item) => [item.id, item.status])).toEqual([[queued.id, 'queued']]);
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(textOfMessage(detail.messages[0])).toBe('a long story [[words:2000]]');
    const partial = detail.messages[1];
    expect(partial?.metadata.interrupted).toBe(true);
    const partialText = textOfMessage(partial);
    expect(partialText.length).toBeGreaterThan(0);
    expect(seen.startsWith(partialText) || partialText.startsWith(seen.trim())).toBe(true);
    expect(partialText.split(/\s+/).length).toBeLessThan(2000);
    expect(partial?.metadata.turnId).toBe(turnId);

    // The orphan row itself: settled by the second instance. Its reply is in memory (what the
    // transcript shows), so the checkpoint copy of the text is gone.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const [orphan] = await sql`
        select status, partial_text, assistant_message_id, lease_expires_at, error
        from chat_turn_requests where id = ${turnId}`;
      expect(orphan).toEqual({
        status: 'interrupted',
        partial_text: '',
        assistant_message_id: partial?.id,
        lease_expires_at: null,
        error: 'The server running this turn stopped; the reply was cut off.',
      });
    } finally {
      await sql.end();
    }

    const turn = await again.json<{ turn: { id: string } | null; queuePaused?: boolean }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(turn.body.turn).toBeNull();
    // A Stop with an item waiting pauses the queue (S3); Resume goes on.
    expect(turn.body.queuePaused).toBe(true);
    await again.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });

    // The lock is free: the queue head can be claimed and runs, told the reply was cut off (S5).
    const claimed = await again.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.status).toBe(200);
    expect(claimed.headers.get('x-turn-id')).toBe(queued.id);
    const text = textOfChunks(await readChunks(claimed));
    expect(text.startsWith('(after interruption) You said: "after the crash".')).toBe(true);
  }, 90_000);

  it('a steer pending when its server dies goes to the head of the queue, not into limbo', async () => {
    const first = await start();
    const client = await ApiClient.signIn(first.baseUrl);
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'no steps here [[words:2000]]');
    await readUntilWords(reply, 10);
    const queued = await client.queued(threadId, 'queued first');
    const steer = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'steered second',
      mode: 'steer',
    });
    const { turn } = (await steer.json()) as { turn: { id: string; status: string } };
    expect(turn.status).toBe('steer_pending');

    await first.kill();

    const second = await start();
    const detail = await waitFor(
      () => client.via(second.baseUrl).detail(threadId),
      (d) => d.turnQueue.activeTurn === null,
      15_000,
    );
    expect(detail.turnQueue.items.map((item) => [item.id, item.status, item.steer])).toEqual([
      [turn.id, 'queued', true],
      [queued.id, 'queued', false],
    ]);
  }, 90_000);
});
