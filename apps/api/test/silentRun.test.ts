import { turnErrorMessages } from '@chat/contracts';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readChunks, textOfChunks, textOfMessage } from './support/client';
import { ScriptedDriver } from './support/scriptedDriver';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * A run that hangs inside its runtime (no chunk, no end, deaf to Stop) must not hold its thread
 * forever: its runner renews the lease while it waits, so no crash recovery would ever take it.
 * The runner stops a run that sends nothing for `TURN_IDLE_MS` and fails it like a failed model
 * call, keeping what it said.
 */
let database: TestDatabase;
let api: TestApi;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startTestApi(
    database.url,
    { TURN_IDLE_MS: '1500', TURN_LEASE_MS: '1500' },
    { driver: (agent) => new ScriptedDriver(agent.memory, () => ({ words: 20, delayMs: 5, hangAfter: 3 })) },
  );
});

afterAll(async () => {
  await api?.close();
  await database?.drop();
});

describe('a run that goes silent', () => {
  it('is stopped as failed after the idle bound: the stream ends, the slot is free, what it said is kept', async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    const response = await client.send(threadId, 'hang after three words');
    expect(response.status).toBe(200);
    const chunks = await readChunks(response);
    expect(textOfChunks(chunks)).toBe('word1 word2 word3');
    expect(chunks.filter((chunk) => chunk.type === 'error').map((chunk) => chunk.errorText)).toEqual([
      turnErrorMessages.modelIdle,
    ]);
    expect(chunks.at(-1)?.type).toBe('finish');

    const detail = await client.detail(threadId);
    expect(detail.turnQueue.activeTurn).toBeNull();
    // A failed run waits at the head of the queue with its attempt shown (Q11).
    expect(detail.turnQueue.items.map((turn) => [turn.status, turn.error])).toEqual([
      ['failed', turnErrorMessages.modelIdle],
    ]);
    expect(detail.messages.map((message) => [message.role, textOfMessage(message)])).toEqual([
      ['user', 'hang after three words'],
      ['assistant', 'word1 word2 word3'],
    ]);
    expect(detail.messages[1]?.metadata.failed).toBe(true);
  }, 30_000);
});
