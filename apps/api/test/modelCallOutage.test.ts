import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MastraDriver } from '../src/chats/turns/driver/mastra/mastraDriver';
import type { RuntimeDriver } from '../src/chats/turns/driver/types';
import { textOfChunks, waitFor } from './support/client';
import { OwnedPostgres } from './support/faults/ownedPostgres';
import { startTestApi, type TestApi } from './support/testApi';

/**
 * The database goes away at the worst moment for a starting run: after the run read what the model
 * gets (the history and the chat's instructions, which wait out an outage themselves) and before
 * the model call, whose own first reads (the chat's tool settings, Mastra's memory) then fail. The
 * turn was accepted, so it must be answered once the database is back, not failed.
 */
const MARK = 'the database goes away as my reply starts';
/** How long the outage lasts: well inside the 30 s a starting run waits. */
const OUTAGE_MS = 3_000;

let postgres: OwnedPostgres;
let api: TestApi;
/** Set once the outage began (the first send of a marked turn); resolves when it is over. */
let outage: Promise<void> | undefined;

/** The real driver, with the outage begun just before it starts a marked turn's run. */
function outageBeforeTheModelCall(inner: RuntimeDriver): RuntimeDriver {
  return {
    send: async (turn) => {
      if (turn.message.text.includes(MARK) && !outage) {
        await postgres.stop();
        outage = sleep(OUTAGE_MS).then(() => postgres.resume());
      }
      return await inner.send(turn);
    },
    discard: (token) => inner.discard(token),
  };
}

beforeAll(async () => {
  postgres = await OwnedPostgres.start();
  api = await startTestApi(
    postgres.databaseUrl,
    {},
    { driver: async (agent) => outageBeforeTheModelCall(await MastraDriver.create(agent)) },
  );
}, 120_000);

afterAll(async () => {
  await api?.close();
  await postgres?.dispose();
});

describe('a database outage just before the model call', () => {
  it('answers the turn once the database is back, instead of failing it', async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    const { turnId, chunks } = await client.sendAndRead(threadId, `${MARK} [[words:30]]`);
    await outage;

    expect(outage, 'the outage began before the model call').toBeDefined();
    expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
    expect(textOfChunks(chunks)).toContain(`You said: "${MARK}"`);
    // Stored as answered: the transcript holds the reply, the turn completed.
    const detail = await waitFor(
      () => client.detail(threadId).catch(() => undefined),
      (read) => read?.turnQueue.activeTurn === null,
      30_000,
    );
    expect(detail?.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    const rows = await postgres.query(
      (sql) => sql<{ status: string }[]>`select status from chat_turn_requests where id = ${turnId}`,
    );
    expect(rows).toEqual([{ status: 'completed' }]);
  }, 90_000);
});
