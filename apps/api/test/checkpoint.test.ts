import { createDatabase, createSql, type Sql } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ReplyRecord } from '../src/chats/turns/replyRecord';
import { TurnCheckpoints } from '../src/chats/turns/running/checkpoint';
import { TextAppends } from '../src/chats/turns/running/textAppends';
import { createLogger } from '../src/platform/logger';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * A running reply's text is written behind its stream at the database's pace, not a timer's: a
 * write starts as soon as text grew and none is in flight, and the next starts as soon as that one
 * is done, with everything that came meanwhile. So what a hard kill can lose is what streamed
 * while one write was under way, however slow the machine's timers run. Shown here with every
 * timer of the process stopped: nothing but the database's answers moves the checkpoints.
 */
const RUNNER = 'checkpoint-test-runner';

let database: TestDatabase;
let api: TestApi;
let sql: Sql;
let watch: Sql;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startTestApi(database.url);
  sql = createSql(database.url, { max: 1 });
  watch = createSql(database.url, { max: 2 });
}, 120_000);

afterAll(async () => {
  vi.useRealTimers();
  await sql?.end({ timeout: 5 });
  await watch?.end({ timeout: 5 });
  await api?.close();
  await database?.drop();
});

/** What a runner gives its replies' checkpoints (its appends written together, as a runner's are). */
function deps(appends = new TextAppends(createDatabase(sql), RUNNER, 3_600_000)) {
  return {
    db: createDatabase(sql),
    runnerId: RUNNER,
    leaseMs: 3_600_000,
    logger: createLogger('silent'),
    appends,
  };
}

/** A turn held by this test's runner (a queued turn of a paused queue, marked running for it). */
async function heldTurn(): Promise<string> {
  const client = await api.client();
  const threadId = await client.createThread();
  const paused = await client.fetch('PUT', `/api/threads/${threadId}/queue/paused`, { paused: true });
  expect(paused.status).toBe(200);
  const queued = await client.json<{ turn: { id: string } }>('POST', `/api/threads/${threadId}/turns`, {
    clientRequestId: crypto.randomUUID(),
    text: 'a reply to checkpoint',
    mode: 'queue',
  });
  expect(queued.status).toBe(202);
  const turnId = queued.body.turn.id;
  await watch`
    update chat_turn_requests set status = 'running', runner_id = ${RUNNER},
      user_message_id = ${crypto.randomUUID()}, started_at = now(), lease_expires_at = now() + interval '1 hour'
    where id = ${turnId}`;
  return turnId;
}

/**
 * Probes until `accept` holds, yielding to the event loop between probes (no timer: they are
 * stopped); `tries` bounds it by the number of database reads, not by time.
 */
async function until<T>(probe: () => Promise<T>, accept: (value: T) => boolean, tries = 3_000): Promise<T> {
  let value = await probe();
  for (let tried = 1; !accept(value) && tried < tries; tried += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    value = await probe();
  }
  return value;
}

/** The checkpoint writes of `turnId` waiting on a row lock now. */
async function waitingWrites(): Promise<number> {
  const [row] = await watch<{ count: number }[]>`
    select count(*)::int as count from pg_stat_activity
    where wait_event_type = 'Lock' and query ilike 'update "chat_turn_requests"%'`;
  return row?.count ?? 0;
}

async function storedText(turnId: string): Promise<string> {
  const [row] = await watch<{ partial_text: string }[]>`
    select partial_text from chat_turn_requests where id = ${turnId}`;
  return row?.partial_text ?? '';
}

describe('text checkpoints', () => {
  it('follow the stream write after write, one in flight, with no timer running', async () => {
    const turnId = await heldTurn();
    // Every connection is open before the timers stop: postgres.js connects on a timer.
    await Promise.all([sql`select 1`, watch`select pg_sleep(0.05)`, watch`select pg_sleep(0.05)`]);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const reply = ReplyRecord.empty();
    const lost = vi.fn();
    const checkpoints = new TurnCheckpoints(deps(), turnId, reply, lost, { id: null, text: '' });
    const grow = (delta: string) => {
      reply.take({ type: 'text-delta', id: 'text', delta });
      checkpoints.textGrew();
    };
    reply.take({ type: 'start', messageId: 'reply-1' });

    // The turn's row is held, so the first write stays in flight while the stream goes on.
    await watch.begin(async (hold) => {
      await hold`select id from chat_turn_requests where id = ${turnId} for update`;
      grow('one ');
      expect(await until(waitingWrites, (count) => count > 0)).toBe(1);
      grow('two ');
      grow('three ');
      // Still one write in flight: what came meanwhile waits for it, gathered into the next.
      for (let probe = 0; probe < 20; probe += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        expect(await waitingWrites()).toBe(1);
      }
    });
    // Released: the write in flight lands, and the next one follows it at once, with all of it.
    expect(
      await until(
        () => storedText(turnId),
        (text) => text === 'one two three ',
      ),
    ).toBe('one two three ');
    grow('four');
    expect(
      await until(
        () => storedText(turnId),
        (text) => text === 'one two three four',
      ),
    ).toBe('one two three four');
    await checkpoints.release();
    vi.useRealTimers();
    expect(lost).not.toHaveBeenCalled();
  }, 60_000);

  it('of several replies go out together: one statement in flight for all, the next with every append that came meanwhile', async () => {
    // A pool of several connections, as a runner's: a statement each could go out at once.
    const pool = createSql(database.url, { max: 4 });
    const appends = new TextAppends(createDatabase(pool), RUNNER, 3_600_000);
    const replies = await Promise.all(
      ['a', 'b', 'c'].map(async (name) => {
        const turnId = await heldTurn();
        const reply = ReplyRecord.empty();
        const checkpoints = new TurnCheckpoints(
          { ...deps(appends), db: createDatabase(pool) },
          turnId,
          reply,
          () => {},
          {
            id: null,
            text: '',
          },
        );
        reply.take({ type: 'start', messageId: `reply-${name}` });
        const grow = (delta: string) => {
          reply.take({ type: 'text-delta', id: 'text', delta });
          checkpoints.textGrew();
        };
        return { name, turnId, checkpoints, grow };
      }),
    );
    const [a, b, c] = replies as [(typeof replies)[0], (typeof replies)[0], (typeof replies)[0]];
    // Each reply's first write is its whole text; from then on, appends.
    for (const reply of replies) reply.grow(`${reply.name}0 `);
    for (const reply of replies)
      expect(
        await until(
          () => storedText(reply.turnId),
          (text) => text === `${reply.name}0 `,
        ),
      ).toBe(`${reply.name}0 `);

    await watch.begin(async (hold) => {
      await hold`select id from chat_turn_requests where id = ${a.turnId} for update`;
      a.grow('a1 ');
      expect(await until(waitingWrites, (count) => count > 0)).toBe(1);
      // The other replies' text waits for the statement in flight instead of a statement each.
      b.grow('b1 ');
      c.grow('c1 ');
      for (let probe = 0; probe < 20; probe += 1) {
        await new Promise((resolve) => setImmediate(resolve));
        expect(await waitingWrites()).toBe(1);
      }
      expect([await storedText(b.turnId), await storedText(c.turnId)]).toEqual(['b0 ', 'c0 ']);
    });
    for (const reply of replies)
      expect(
        await until(
          () => storedText(reply.turnId),
          (text) => text === `${reply.name}0 ${reply.name}1 `,
        ),
      ).toBe(`${reply.name}0 ${reply.name}1 `);
    for (const reply of replies) await reply.checkpoints.release();
    await pool.end({ timeout: 5 });
  }, 60_000);

  it('of one reply the database refuses (a NUL character) hold back no other reply written with it', async () => {
    const pool = createSql(database.url, { max: 4 });
    const appends = new TextAppends(createDatabase(pool), RUNNER, 3_600_000);
    const [first, good, bad] = [await heldTurn(), await heldTurn(), await heldTurn()];
    await watch
      .begin(async (hold) => {
        // One append in flight (held), so the next two go out together after it.
        await hold`select id from chat_turn_requests where id = ${first} for update`;
        const held = appends.append(first, 'first', 0);
        expect(await until(waitingWrites, (count) => count > 0)).toBe(1);
        // The refusal is caught as it comes: it may come before the awaits below reach it, and an
        // unhandled rejection fails the whole run.
        const together = [
          appends.append(good, 'fine text', 0),
          appends.append(bad, 'bad \u0000 text', 0).then(
            () => 'stored',
            (error: unknown) => error,
          ),
        ];
        await hold`select 1`;
        return { held, together };
      })
      .then(async ({ held, together }) => {
        expect(await held).toBe(true);
        expect(await together[0]).toBe(true);
        expect(await together[1]).toBeInstanceOf(Error);
      });
    expect([await storedText(first), await storedText(good), await storedText(bad)]).toEqual([
      'first',
      'fine text',
      '',
    ]);
    await pool.end({ timeout: 5 });
  }, 60_000);
});
