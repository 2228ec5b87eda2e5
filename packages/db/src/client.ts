import { backoffDelay } from '@chat/contracts';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { HangWatch } from './hangWatch';
import * as schema from './schema';

export type Database = ReturnType<typeof createDatabase>;
export type Sql = postgres.Sql;

/**
 * How long the app waits on the database, for every pool that serves requests (this postgres.js
 * client and Mastra's `pg` pool, `apps/api/src/chats/transcript/mastra/mastraMemory.ts`). While
 * the database is away a request must fail fast (`503 unavailable`), never hang:
 * - `connectMs`: a new connection that is not up by then fails (postgres.js waits 30 s by default,
 *   node-postgres forever);
 * - `statementMs`: the server cancels a statement running longer (no request needs more; schema
 *   changes run on their own connections, without it);
 * - `reconnectMaxMs`: the longest pause between two attempts to reconnect. postgres.js grows its
 *   pause to 20 s after a few failed attempts, and every query waits out the pause before it can
 *   fail: that is what held requests for 8 to 38 s during an outage;
 * - `stallMs`, `checkMs` and `tickMs`: the client-side deadline (`HangWatch`). A database that
 *   hangs enforces no statement timeout and closes nothing; a statement (or a connection's start-up)
 *   unanswered for `stallMs`, seen at the next tick, gets the database checked on a connection of
 *   its own, and a check unanswered for `checkMs` cuts every connection, and every new one until a
 *   check is answered, so each waiting request fails as in an outage within about 1.6 s. No
 *   statement waits longer than `statementMs + connectMs`, checked or not.
 */
export const DATABASE_TIMEOUTS = {
  connectMs: 2_000,
  statementMs: 30_000,
  reconnectMaxMs: 500,
  stallMs: 750,
  checkMs: 750,
  tickMs: 100,
} as const;

/**
 * The client-side deadline for the connections of `url` that serve requests (`createSql`'s and
 * Mastra's pool): one per process, its check on a connection of its own.
 */
export function createHangWatch(url: string, onHang?: (dropped: number) => void): HangWatch {
  let checker: Sql | undefined;
  return new HangWatch({
    check: async () => {
      checker ??= postgres(url, {
        max: 1,
        connect_timeout: DATABASE_TIMEOUTS.connectMs / 1000,
        onnotice: () => {},
      });
      return await checker`select 1`;
    },
    resetCheck: async () => {
      const ended = checker;
      checker = undefined;
      await ended?.end({ timeout: 0 });
    },
    stallMs: DATABASE_TIMEOUTS.stallMs,
    checkMs: DATABASE_TIMEOUTS.checkMs,
    tickMs: DATABASE_TIMEOUTS.tickMs,
    deadlineMs: DATABASE_TIMEOUTS.statementMs + DATABASE_TIMEOUTS.connectMs,
    onHang,
  });
}

/** `watch`: the client-side deadline its connections keep (every pool that serves requests has one). */
export function createSql(url: string, options: { max?: number; watch?: HangWatch } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    ...(options.watch ? { socket: options.watch.socket } : {}),
    connect_timeout: DATABASE_TIMEOUTS.connectMs / 1000,
    // In seconds; `retries` counts failed attempts in a row from 0: 50 ms, doubling, at most reconnectMaxMs.
    backoff: (retries) => backoffDelay(retries + 1, 50, DATABASE_TIMEOUTS.reconnectMaxMs) / 1000,
    connection: { statement_timeout: DATABASE_TIMEOUTS.statementMs },
    onnotice: () => {},
  });
}

export function createDatabase(sql: Sql) {
  return drizzle(sql, { schema });
}

/** Any transaction or the database itself: named queries take either. */
export type Queryable = Database | Parameters<Parameters<Database['transaction']>[0]>[0];
