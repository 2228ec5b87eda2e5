import { Writable } from 'node:stream';
import { turnErrorMessages } from '@chat/contracts';
import { createDatabase, createSql } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MastraDriver } from '../src/chats/turns/driver/mastra/mastraDriver';
import type { DriverTurn, RuntimeDriver } from '../src/chats/turns/driver/types';
import { type ApiClient, readChunks } from './support/client';
import { freshDatabase, startTestApi, type TestApi, turnRow } from './support/testApi';

/**
 * F3: a person never reads raw database or driver error text. A real database error (a query
 * PostgreSQL refuses, its parameter a value of the person's) meets a reply after its run started,
 * on the two ways it comes: inside the model call's run (the driver reports it as its `error`
 * event) and breaking the run off (the driver's events throw). The stream, the stored turn, the
 * thread's detail and its failed head show the contract's words; the log has the raw text, never
 * the parameter.
 */
const SECRET = 'orchid-zebra-5512';

/** Everything the API logs, at warn level and above. */
const logged: string[] = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    logged.push(String(chunk));
    done();
  },
});

let database: TestDatabase;
let api: TestApi;
let client: ApiClient;
let faultSql: ReturnType<typeof createSql>;

/** A query PostgreSQL refuses ("invalid input syntax for type integer"), made for real. */
async function refusedQuery(): Promise<never> {
  await createDatabase(faultSql).execute(sql`select ${SECRET}::int`);
  throw new Error('the query was expected to fail');
}

/** Moves Mastra's messages table out of the way (every read of it fails), or back. */
async function moveMessagesTable(to: 'away' | 'back'): Promise<void> {
  const [from, name] =
    to === 'away' ? ['mastra_messages', 'messages_away'] : ['messages_away', 'mastra_messages'];
  await faultSql.unsafe(`alter table mastra.${from} rename to ${name}`);
}

/**
 * The real Mastra driver, meeting a database error after the run started: with
 * `[[db-fault:recall]]` the run's own first read of the conversation (Mastra's recall, once the
 * runner has prepared the history) finds its table gone; with `[[db-fault:events]]` its events
 * throw the error of a query PostgreSQL refuses after the first words.
 */
function meetingDatabaseErrors(inner: RuntimeDriver): RuntimeDriver {
  return {
    send: async (turn: DriverTurn) => {
      if (turn.message.text.includes('[[db-fault:recall]]')) {
        await moveMessagesTable('away');
        const connection = await inner.send(turn);
        async function* restoring() {
          let restored = false;
          for await (const event of connection.events) {
            if (!restored) {
              await moveMessagesTable('back');
              restored = true;
            }
            yield event;
          }
        }
        return { events: restoring(), steerable: connection.steerable, close: () => connection.close() };
      }
      const connection = await inner.send(turn);
      if (!turn.message.text.includes('[[db-fault:events]]')) return connection;
      async function* events() {
        let chunks = 0;
        for await (const event of connection.events) {
          yield event;
          if (event.type === 'chunk' && event.chunk.type === 'text-delta' && ++chunks === 3)
            await refusedQuery();
        }
      }
      return { events: events(), steerable: connection.steerable, close: () => connection.close() };
    },
    discard: (token) => inner.discard(token),
    summarize: (request) => inner.summarize?.(request) ?? Promise.resolve(''),
  };
}

beforeAll(async () => {
  database = await freshDatabase();
  faultSql = createSql(database.url, { max: 1 });
  api = await startTestApi(
    database.url,
    { LOG_LEVEL: 'warn' },
    {
      driver: async (chatAgent) => meetingDatabaseErrors(await MastraDriver.create(chatAgent)),
      logTo: capture,
    },
  );
  client = await api.client();
}, 120_000);

afterAll(async () => {
  await api?.close();
  await faultSql?.end();
  await database?.drop();
});

/** Whether any raw piece of the database's error is in `text`. */
function raw(text: string): boolean {
  return /invalid input syntax|Failed query|select \$1|::int|orchid-zebra|does not exist|mastra_messages/i.test(
    text,
  );
}

async function failedReply(text: string) {
  const threadId = await client.createThread();
  const response = await client.send(threadId, text);
  expect(response.status).toBe(200);
  const turnId = response.headers.get('x-turn-id') ?? '';
  const chunks = await readChunks(response);
  const errors = chunks.filter((chunk) => chunk.type === 'error').map((chunk) => String(chunk.errorText));
  const detail = await client.detail(threadId);
  return { threadId, turnId, errors, detail, row: await turnRow(api, turnId) };
}

describe('a database error after a reply started reaches the person in the product’s words only (F3)', () => {
  it.each([
    [
      'in the model call’s run (the driver’s error event)',
      'a reply [[words:40]] [[db-fault:recall]]',
      // Mastra passes the database's words on, not its error: as far as the host can tell, the
      // model call failed. Either way, the person reads the contract's words.
      turnErrorMessages.modelFailed,
      /does not exist/,
    ],
    [
      'breaking the run off (the driver’s events throw)',
      'a longer reply [[words:40]] [[delay:20]] [[db-fault:events]]',
      turnErrorMessages.databaseFailed,
      /invalid input syntax|Failed query/,
    ],
  ])(
    '%s: the stream, the stored turn, the detail and the failed head say what happened and what to do; the log has the raw text without its parameter',
    async (_, text, words, rawInLog) => {
      const before = logged.length;
      const { turnId, errors, detail, row } = await failedReply(text);

      expect(errors).toEqual([words]);
      expect(row).toMatchObject({ status: 'failed', error: words });
      expect(detail.turnQueue.activeTurn).toBeNull();
      expect(detail.turnQueue.items.map((item) => [item.id, item.status, item.error])).toEqual([
        [turnId, 'failed', words],
      ]);
      const marked = detail.messages.filter((message) => message.metadata.failed === true);
      expect(marked.length).toBeGreaterThan(0);
      for (const message of marked) expect(message.metadata.error).toBe(words);
      expect(raw(JSON.stringify(detail))).toBe(false);

      // The raw text went to the log, with the turn's id, and never the query's parameter.
      const lines = logged.slice(before).join('\n');
      expect(lines).toMatch(rawInLog);
      expect(lines).toContain(turnId);
      expect(lines).not.toContain(SECRET);
    },
  );
});
