import type { Queryable, TurnRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, desc, eq, isNull, lt, type SQL, sql } from 'drizzle-orm';
import { statusIn } from '../lifecycle';

/** The queries of running turns: leases and checkpoints, orphans, the per-account cap, S5's read. */

const turns = schema.chatTurnRequests;

/** A turn some instance's runner is producing (it has a lease). */
const running = eq(turns.status, 'running');

/**
 * How many turns the owner of `threadId` has running, across all their threads. Takes a
 * transaction-level advisory lock on the owner first, so two claims of one account on different
 * threads count one after the other (the caller already holds its thread's lock; nothing takes
 * these two locks in the other order).
 */
export async function countRunningTurnsOfOwner(q: Queryable, threadId: string): Promise<number> {
  const threads = schema.threads;
  const [owner] = await q.select({ ownerId: threads.ownerId }).from(threads).where(eq(threads.id, threadId));
  if (!owner) return 0;
  await q.execute(sql`select pg_advisory_xact_lock(hashtextextended(${owner.ownerId}, 727274002))`);
  const [row] = await q
    .select({ count: sql<number>`count(*)::int` })
    .from(turns)
    .innerJoin(threads, eq(threads.id, turns.threadId))
    .where(and(eq(threads.ownerId, owner.ownerId), running));
  return row?.count ?? 0;
}

/**
 * S5: the turn that settled last on a branch and whose messages are still there. Turns are claimed
 * head first and one at a time, so they settle in `seq` order; the partial index
 * `turns_branch_settled_seq_idx` serves this read at every claim.
 */
export async function lastSettledTurnOnBranch(q: Queryable, branchId: string): Promise<TurnRow | undefined> {
  const [row] = await q
    .select()
    .from(turns)
    .where(and(eq(turns.branchId, branchId), statusIn('settled'), isNull(turns.removedAt)))
    .orderBy(desc(turns.seq))
    .limit(1);
  return row;
}

/** Heartbeat of a running turn: extends the lease and checkpoints the visible reply so far. */
export async function checkpointRunningTurn(
  q: Queryable,
  turnId: string,
  runnerId: string,
  leaseMs: number,
  progress: { partialText: string; assistantMessageId: string | null },
): Promise<boolean> {
  const rows = await q
    .update(turns)
    .set({
      partialText: progress.partialText,
      assistantMessageId: progress.assistantMessageId,
      leaseExpiresAt: leaseFromNow(leaseMs),
    })
    .where(and(eq(turns.id, turnId), running, eq(turns.runnerId, runnerId)))
    .returning({ id: turns.id });
  return rows.length > 0;
}

/** The turn if it is running with an expired lease, by the database's clock (all instances share it). */
export async function findOrphanedTurn(q: Queryable, turnId: string): Promise<TurnRow | undefined> {
  const [row] = await q
    .select()
    .from(turns)
    .where(and(eq(turns.id, turnId), running, lt(turns.leaseExpiresAt, sql`now()`)));
  return row;
}

/** Running turns whose runner stopped renewing its lease (a crashed or hung process). */
export async function listOrphanedTurns(q: Queryable): Promise<TurnRow[]> {
  return await q
    .select()
    .from(turns)
    .where(and(running, lt(turns.leaseExpiresAt, sql`now()`)));
}

/** The database's clock plus the lease, so instances with skewed clocks agree on expiry. */
export function leaseFromNow(leaseMs: number): SQL {
  return sql`now() + ${`${leaseMs} milliseconds`}::interval`;
}
