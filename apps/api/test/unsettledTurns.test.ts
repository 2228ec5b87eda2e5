import { turnErrorMessages } from '@chat/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, readChunks, textOfMessage, waitFor } from './support/client';
import { OwnedPostgres } from './support/faults/ownedPostgres';
import { StreamView } from './support/faults/streamView';

/**
 * F1: a settle that fails for a reason other than an outage is tried again for a bounded time,
 * then its turn ends `failed` with its reply's text kept on the row; the stream ends with the
 * product's words, the thread is free, the error is logged once. The fault is a real one: a
 * trigger makes PostgreSQL refuse every write of a stored message (a constraint the settle meets
 * on every try, as a bug or a bad row would), while everything else works. Against API processes
 * on a PostgreSQL server of the test's own, with a restart in the second case.
 */
const LEASE_MS = '1500';
/** The bounded retry, short here: a minute by default. */
const GIVE_UP_MS = '3000';
const REFUSAL = 'stored messages refused by the test';

let postgres: OwnedPostgres;
const started: ApiProcess[] = [];

beforeAll(async () => {
  postgres = await OwnedPostgres.start();
}, 120_000);

afterEach(async () => {
  await refuseMessageWrites(false);
});

afterAll(async () => {
  for (const api of started) await api.stop().catch(() => {});
  await postgres?.dispose();
});

async function startApi(giveUpMs: string): Promise<ApiProcess> {
  const api = await startApiProcess(
    {
      DATABASE_URL: postgres.databaseUrl,
      TURN_LEASE_MS: LEASE_MS,
      SETTLE_GIVE_UP_MS: giveUpMs,
      LOG_LEVEL: 'warn',
    },
    { captureOutput: true },
  );
  started.push(api);
  return api;
}

/** Makes every write of a stored message (Mastra's messages table) fail, or work again. */
async function refuseMessageWrites(refuse: boolean): Promise<void> {
  await postgres.query(async (sql) => {
    if (!refuse) {
      await sql.unsafe('drop trigger if exists refuse_writes on mastra.mastra_messages');
      return;
    }
    await sql.unsafe(`
      create or replace function mastra.refuse_writes() returns trigger language plpgsql as $$
      begin raise exception '${REFUSAL}'; end $$`);
    await sql.unsafe(`
      create trigger refuse_writes before insert or update on mastra.mastra_messages
      for each row execute function mastra.refuse_writes()`);
  });
}

interface Row {
  status: string;
  error: string | null;
  partial_text: string;
  lease_expires_at: Date | null;
}

async function turnRow(turnId: string): Promise<Row | undefined> {
  const [row] = await postgres.query(
    (sql) => sql<Row[]>`
      select status, error, partial_text, lease_expires_at from chat_turn_requests where id = ${turnId}`,
  );
  return row;
}

/** A reply streaming on `api`, the writes of its messages refused once it has said a few words. */
async function replyThatCannotBeStored(api: ApiProcess) {
  const client = await ApiClient.signIn(api.baseUrl);
  const threadId = await client.createThread();
  const response = await client.send(threadId, 'a reply to keep [[words:30]] [[delay:40]]');
  expect(response.status).toBe(200);
  const view = new StreamView(response.headers.get('x-turn-id') ?? '', response);
  await waitFor(
    async () => view.wordCount,
    (words) => words >= 3,
    30_000,
  );
  await refuseMessageWrites(true);
  return { client, threadId, view };
}

/**
 * The log lines that gave a settle up, for `turnId`, of every process in `apis`, once the first has come through the pipe (it may
 * arrive after the row the test read).
 */
async function loggedGiveUps(apis: ApiProcess[], turnId: string): Promise<Array<Record<string, unknown>>> {
  const read = () =>
    apis
      .flatMap((api) => api.output)
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'gave up settling a turn; it ended failed' && line.turnId === turnId);
  return await waitFor(
    async () => read(),
    (lines) => lines.length > 0,
    15_000,
  );
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

describe('a settle that fails for a reason other than an outage (F1)', () => {
  it('is tried again for a bounded time, then the turn ends failed with its text kept, the stream ends with the product’s words and the thread is free', async () => {
    const api = await startApi(GIVE_UP_MS);
    const { client, threadId, view } = await replyThatCannotBeStored(api);

    // Today the stream never ended: the settle was tried every 2 s forever.
    await waitFor(
      async () => view.ended,
      (ended) => ended,
      60_000,
    );
    expect(view.errors).toEqual([turnErrorMessages.notSaved]);
    expect(view.finish).toEqual({ at: expect.any(Number), interrupted: false });
    expect(view.wordCount).toBe(30);

    const row = await turnRow(view.turnId);
    expect(row).toMatchObject({
      status: 'failed',
      error: turnErrorMessages.notSaved,
      lease_expires_at: null,
    });
    expect(normalise(row?.partial_text ?? '')).toBe(normalise(view.textSeen().join('')));

    // The thread is free: nothing active, the turn waits as the failed head (Q11).
    const detail = await client.detail(threadId);
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.turnQueue.items.map((item) => [item.id, item.status, item.error])).toEqual([
      [view.turnId, 'failed', turnErrorMessages.notSaved],
    ]);
    // Logged once, with the turn's id and the error that kept it from settling.
    const lines = await loggedGiveUps([api], view.turnId);
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines[0])).toContain(REFUSAL);

    // Retry runs it again once the database takes the messages.
    await refuseMessageWrites(false);
    const retry = await client.fetch('POST', `/api/threads/${threadId}/queue/${view.turnId}/retry`, {});
    expect(retry.status).toBe(200);
    const chunks = await readChunks(retry);
    expect(chunks.filter((chunk) => chunk.type === 'error')).toEqual([]);
    const after = await client.detail(threadId);
    expect(after.turnQueue).toMatchObject({ activeTurn: null, items: [] });
    expect(after.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(textOfMessage(after.messages[0])).toBe('a reply to keep [[words:30]] [[delay:40]]');
    expect((await turnRow(view.turnId))?.status).toBe('completed');
    // Still once: no later try logged it again.
    expect(await loggedGiveUps([api], view.turnId)).toHaveLength(1);
    // Its sweeper would meet the next test's orphan too: only that test's instances run there.
    await api.stop();
  }, 180_000);

  it('after a restart, crash recovery gives the same settle up after the bound: the turn ends failed with its text kept, logged once', async () => {
    // This process would try for ten minutes; it is killed while it tries.
    const first = await startApi('600000');
    const { client, threadId, view } = await replyThatCannotBeStored(first);
    await waitFor(
      () => turnRow(view.turnId),
      (row) => row?.status === 'settling',
      60_000,
    );
    await first.kill();

    const second = await startApi(GIVE_UP_MS);
    // Today every sweep failed the same way and the turn stayed settling, its thread held.
    const row = await waitFor(
      () => turnRow(view.turnId),
      (read) => read?.status === 'failed',
      90_000,
    );
    expect(row).toMatchObject({
      status: 'failed',
      error: turnErrorMessages.notSaved,
      lease_expires_at: null,
    });
    expect(normalise(row?.partial_text ?? '')).toBe(normalise(view.textSeen().join('')));
    expect(await loggedGiveUps([second], view.turnId)).toHaveLength(1);

    const detail = await client.via(second.baseUrl).detail(threadId);
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.turnQueue.items.map((item) => [item.id, item.status, item.error])).toEqual([
      [view.turnId, 'failed', turnErrorMessages.notSaved],
    ]);
  }, 300_000);
});
