import { type Database, preparedQuery, preparedSql, schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useOwnedDatabase } from './support/testApi';

const { threads } = schema;
const ownerId = crypto.randomUUID();

/**
 * A prepared hot query (built once, `preparedQuery`) runs on the caller's connection: inside a
 * transaction it sees that transaction's own uncommitted rows and takes its locks there, exactly
 * as the query built anew each call did; outside one it runs on the pool.
 */
let db: Database;
useOwnedDatabase(ownerId, (ready) => {
  db = ready;
});

const titleOf = preparedQuery('test_thread_title', (q) =>
  q
    .select({ title: threads.title })
    .from(threads)
    .where(eq(threads.id, sql.placeholder('threadId'))),
);

async function insertThread(q: Parameters<typeof titleOf>[0], title: string): Promise<string> {
  const [row] = await q.insert(threads).values({ ownerId, title, titled: true }).returning();
  return (row as { id: string }).id;
}

describe('preparedQuery', () => {
  it("sees a transaction's own uncommitted rows when run inside it, and nothing of them outside", async () => {
    await db
      .transaction(async (tx) => {
        const threadId = await insertThread(tx, 'uncommitted');
        expect(await titleOf(tx, { threadId })).toEqual([{ title: 'uncommitted' }]);
        // The pool's connections cannot see it until the commit.
        expect(await titleOf(db, { threadId })).toEqual([]);
        tx.rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Error) || !error.message.includes('Rollback')) throw error;
      });
  });

  it('gives the rows of each call its own values, on the pool and across transactions', async () => {
    const first = await insertThread(db, 'first');
    const second = await insertThread(db, 'second');
    expect(await titleOf(db, { threadId: first })).toEqual([{ title: 'first' }]);
    expect(await titleOf(db, { threadId: second })).toEqual([{ title: 'second' }]);
    for (const [threadId, title] of [
      [first, 'first'],
      [second, 'second'],
    ] as const) {
      await db.transaction(async (tx) => {
        expect(await titleOf(tx, { threadId })).toEqual([{ title }]);
      });
    }
  });

  it("runs a statement written in SQL (preparedSql) the same way: its own values, its transaction's rows", async () => {
    const retitle = preparedSql<{ threadId: string; title: string }, { title: string }>(
      'test_thread_retitle',
      sql`update ${threads} set title = ${sql.placeholder('title')} where id = ${sql.placeholder('threadId')} returning title`,
    );
    const first = await insertThread(db, 'first');
    const second = await insertThread(db, 'second');
    expect(await retitle(db, { threadId: first, title: 'one' })).toEqual([{ title: 'one' }]);
    expect(await retitle(db, { threadId: second, title: 'two' })).toEqual([{ title: 'two' }]);
    await db
      .transaction(async (tx) => {
        expect(await retitle(tx, { threadId: first, title: 'uncommitted' })).toEqual([
          { title: 'uncommitted' },
        ]);
        tx.rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Error) || !error.message.includes('Rollback')) throw error;
      });
    // Rolled back with its transaction.
    expect(await titleOf(db, { threadId: first })).toEqual([{ title: 'one' }]);
    expect(await titleOf(db, { threadId: second })).toEqual([{ title: 'two' }]);
  });
});
