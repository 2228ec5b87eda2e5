import { type Database, type Sql, schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertThreadWithRootBranch } from '../src/chats/threads/repository';
import { insertTokenCounts } from '../src/chats/turns/context/repository';
import { insertTurn } from '../src/chats/turns/lifecycle';
import { findTurn } from '../src/chats/turns/repository';
import { settleTurn } from '../src/chats/turns/settle/settle';
import { createLogger } from '../src/platform/logger';
import { Signals } from '../src/platform/notifications';
import { type TestApi, useTestApi } from './support/testApi';

/**
 * A settle writes the token counts of the messages its reply's store wrote (C2, ADR-054) while a
 * window measure, one statement on another connection, may write the same ones: neither may fail
 * the other. The measure's foreign-key check waits for the thread lock the settle holds, so the
 * settle writes its counts before it takes the lock; written after it, the two wait on each other
 * and PostgreSQL ends one of them (a deadlock).
 */
let api: TestApi;
let db: Database;
let client: Sql;
let ownerId: string;
const logger = createLogger('silent');

useTestApi(async (started) => {
  api = started.api;
  ({ db, sql: client } = api.runtime.database);
});

beforeAll(async () => {
  // A guest's account, as a send would have it.
  const [user] = await db.select({ id: schema.user.id }).from(schema.user).limit(1);
  ownerId = user?.id ?? '';
});

/** Resolves once some backend waits for a lock (the measure's statement, blocked). */
async function someoneWaitsForALock(): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const rows = await db.execute<{ waiting: number }>(
      sql`select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
    );
    if ((rows[0]?.waiting ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('nothing waited for a lock');
}

describe("a settle's token counts beside a measure writing the same ones", () => {
  it('both end well: the measure waits for the settle, then finds them written', async () => {
    const { thread, branch } = await insertThreadWithRootBranch(db, {
      ownerId,
      title: 'Counts',
      titled: true,
      drainMode: 'viewer',
    });
    const turn = await insertTurn(
      db,
      'running',
      { threadId: thread.id, branchId: branch.id, clientRequestId: crypto.randomUUID(), text: 'hello' },
      {
        handoff: false,
        runnerId: 'runner-a',
        leaseMs: 60_000,
        startedAt: new Date(),
        userMessageId: 'u1',
        model: 'm',
      },
    );
    const counts = ['u1', 'r1'].map((messageId) => ({
      threadId: thread.id,
      messageId,
      encoding: 'local_words',
      tokens: 5,
    }));
    const signals = new Signals(client, () => client, logger);
    let measure: Promise<void> | undefined;
    const settled = await settleTurn(
      { db, signals, logger },
      thread.id,
      async (tx) => {
        // The thread is locked by now: the measure writes the counts on its own connection.
        const row = await findTurn(tx, thread.id, turn.id);
        measure = insertTokenCounts(db, [...counts].reverse());
        await someoneWaitsForALock();
        return row;
      },
      async () => ({ status: 'completed', error: null, assistantMessageId: 'r1' }),
      counts,
    );
    await measure;
    expect(settled?.status).toBe('completed');
    const stored = await db
      .select()
      .from(schema.messageTokenCounts)
      .where(eq(schema.messageTokenCounts.threadId, thread.id));
    expect(stored.map((row) => row.messageId).sort()).toEqual(['r1', 'u1']);
  });
});
