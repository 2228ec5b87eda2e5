import type { ThreadDetail, Turn } from '@chat/contracts';
import type { TestDatabase } from '@chat/db/testing';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, textOfMessage, waitFor } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * Q15 across instances: every instance drains every chat, found in PostgreSQL, and a head is
 * claimed by one of them only. A drain cut by a hard kill is picked up by another instance once
 * the turn's lease has run out: the cut turn settles interrupted, the next gets the handoff (S5).
 */

let database: TestDatabase;
const listener: { sql?: postgres.Sql; started: Map<string, number> } = { started: new Map() };

beforeAll(async () => {
  database = await freshDatabase();
  // Every turn.started any instance announces, counted per turn: none may start twice.
  listener.sql = postgres(database.url, { max: 1, onnotice: () => {} });
  await listener.sql.listen('chat_signals', (payload) => {
    const signal = JSON.parse(payload) as { kind: string; turnId?: string };
    if (signal.kind === 'turn.started' && signal.turnId)
      listener.started.set(signal.turnId, (listener.started.get(signal.turnId) ?? 0) + 1);
  });
});

afterAll(async () => {
  await listener.sql?.end();
  await database?.drop();
});

const drained = (detail: ThreadDetail) =>
  detail.turnQueue.activeTurn === null && detail.turnQueue.items.length === 0;
const userTexts = (detail: ThreadDetail) =>
  detail.messages.filter((message) => message.role === 'user').map((message) => textOfMessage(message));

async function turnRows(threadId: string) {
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    return await sql<{ id: string; status: string; handoff: boolean; runner_id: string | null }[]>`
      select id, status, handoff, runner_id from chat_turn_requests
      where thread_id = ${threadId} order by queue_position`;
  } finally {
    await sql.end();
  }
}

/** A background chat with a reply running (its stream dropped) and `texts` queued behind it. */
async function busyBackgroundChat(client: ApiClient, first: string, texts: string[]) {
  const threadId = await client.createThread();
  const patched = await client.json('PATCH', `/api/threads/${threadId}`, { drainMode: 'background' });
  expect(patched.status).toBe(200);
  const running = await client.send(threadId, first);
  expect(running.status).toBe(200);
  await running.body?.cancel();
  const queued: Turn[] = [];
  for (const text of texts) queued.push(await client.queued(threadId, text));
  return { threadId, firstId: running.headers.get('x-turn-id') ?? '', queued };
}

describe('two instances on one database', () => {
  let apis: TestApi[] = [];

  afterAll(async () => {
    await Promise.all(apis.map((api) => api.close()));
  });

  it('drain several chats between them, each head claimed once, in order', async () => {
    apis = [await startTestApi(database.url), await startTestApi(database.url)];
    const [a, b] = apis as [TestApi, TestApi];
    const person = await a.client();
    const chats = [];
    for (let index = 0; index < 4; index += 1) {
      // The sends alternate between the instances: both run replies and both hear every settle.
      const via = person.via((index % 2 === 0 ? a : b).baseUrl);
      chats.push({
        via,
        ...(await busyBackgroundChat(via, `c${index} first [[words:40]] [[delay:30]]`, [
          `c${index} second [[words:5]]`,
          `c${index} third [[words:5]]`,
          `c${index} fourth [[words:5]]`,
        ])),
      });
    }
    const runners = new Set<string>();
    for (const [index, chat] of chats.entries()) {
      const detail = await waitFor(() => chat.via.detail(chat.threadId), drained, 45_000);
      expect(userTexts(detail)).toEqual([
        `c${index} first [[words:40]] [[delay:30]]`,
        `c${index} second [[words:5]]`,
        `c${index} third [[words:5]]`,
        `c${index} fourth [[words:5]]`,
      ]);
      expect(detail.messages.map((message) => message.role)).toEqual(
        Array(4).fill(['user', 'assistant']).flat(),
      );
      const rows = await turnRows(chat.threadId);
      expect(rows.map((row) => row.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
      for (const row of rows) {
        expect(listener.started.get(row.id), row.id).toBe(1);
        if (row.runner_id) runners.add(row.runner_id);
      }
    }
    // Both instances drained (the claims are spread by who hears a settle first); this is not a
    // rule of the drain, so it is not asserted beyond "at least one".
    expect(runners.size).toBeGreaterThanOrEqual(1);
  }, 120_000);
});

describe('an instance killed mid-drain (SIGKILL)', () => {
  const processes: ApiProcess[] = [];

  afterAll(async () => {
    // A crash test's processes need no goodbye; a SIGKILL never waits on a shutdown.
    await Promise.all(processes.map((api) => api.kill()));
  });

  it('leaves the cut turn to another instance after the lease, which settles it interrupted and drains the rest with the handoff', async () => {
    const env = { DATABASE_URL: database.url, TURN_LEASE_MS: '1500', LOCAL_MODEL_DELAY_MS: '20' };
    processes.push(await startApiProcess(env), await startApiProcess(env));
    const [one, two] = processes as [ApiProcess, ApiProcess];
    const client = await ApiClient.signIn(one.baseUrl);
    const { threadId, firstId, queued } = await busyBackgroundChat(
      client,
      'first [[words:40]] [[delay:30]]',
      ['cut [[words:600]]', 'after the cut [[words:5]]', 'last [[words:5]]'],
    );
    const [cut, afterCut, last] = queued as [Turn, Turn, Turn];

    // The drained turn runs somewhere with some of its reply checkpointed: kill that instance.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    let runner = '';
    try {
      runner = await waitFor(
        async () => {
          const [row] = await sql<{ runner_id: string | null; partial_text: string; status: string }[]>`
            select runner_id, partial_text, status from chat_turn_requests where id = ${cut.id}`;
          return row?.status === 'running' && row.partial_text.length > 0 ? (row.runner_id ?? '') : '';
        },
        (id) => id !== '',
        30_000,
      );
    } finally {
      await sql.end();
    }
    const [victim, survivor] = runner.startsWith(`api-${one.child.pid}-`) ? [one, two] : [two, one];
    expect(runner.startsWith(`api-${victim.child.pid}-`)).toBe(true);
    await victim.kill();

    const again = client.via(survivor.baseUrl);
    const detail = await waitFor(() => again.detail(threadId), drained, 45_000);
    expect(userTexts(detail)).toEqual([
      'first [[words:40]] [[delay:30]]',
      'cut [[words:600]]',
      'after the cut [[words:5]]',
      'last [[words:5]]',
    ]);
    const rows = new Map((await turnRows(threadId)).map((row) => [row.id, row]));
    expect(rows.get(firstId)?.status).toBe('completed');
    expect(rows.get(cut.id)?.status).toBe('interrupted');
    // The first turn after the cut gets the hidden handoff; the one after it does not (S5).
    expect(rows.get(afterCut.id)).toMatchObject({ status: 'completed', handoff: true });
    expect(rows.get(last.id)).toMatchObject({ status: 'completed', handoff: false });
    expect(rows.get(afterCut.id)?.runner_id?.startsWith(`api-${survivor.child.pid}-`)).toBe(true);
    const cutReply = detail.messages[3];
    expect(cutReply?.metadata.interrupted).toBe(true);
    for (const turnId of [cut.id, afterCut.id, last.id]) expect(listener.started.get(turnId), turnId).toBe(1);
  }, 180_000);
});
