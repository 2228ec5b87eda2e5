import type { Queryable, TurnRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { statusIn } from '../lifecycle';

/** The queries of a claim: the per-account cap on running turns, and S5's read of the last turn. */

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
  return await countRunningTurnsOf(q, owner.ownerId);
}

/**
 * `countRunningTurnsOfOwner` when the owner is known. The lock and the count go out together (one
 * round trip): a transaction runs its statements in order, so the count waits for the lock.
 */
export async function countRunningTurnsOf(q: Queryable, ownerId: string): Promise<number> {
  const threads = schema.threads;
  const [, [row]] = await Promise.all([
    q.execute(sql`select pg_advisory_xact_lock(hashtextextended(${ownerId}, 727274002))`),
    q
      .select({ count: sql<number>`count(*)::int` })
      .from(turns)
      .innerJoin(threads, eq(threads.id, turns.threadId))
      .where(and(eq(threads.ownerId, ownerId), running)),
  ]);
  return row?.count ?? 0;
}

/**
 * S5: the turn that settled last on a branch and whose messages are still there. Turns run one at
 * a time and each claim stamps the next `queue_position`, so they settle in that order (not in
 * `seq` order: the queue can be reordered, Q13); the partial index
 * `turns_branch_settled_position_idx` serves this read at every claim.
 */
export async function lastSettledTurnOnBranch(q: Queryable, branchId: string): Promise<TurnRow | undefined> {
  const [row] = await selectLastSettledTurn(q, { branchId });
  return row;
}

/** Read by every send to an idle thread (S5): built once (preparedQuery). */
const selectLastSettledTurn = preparedQuery('last_settled_turn', (q) =>
  q
    .select()
    .from(turns)
    .where(and(eq(turns.branchId, sql.placeholder('branchId')), statusIn('settled'), isNull(turns.removedAt)))
    .orderBy(desc(turns.queuePosition))
    .limit(1),
);

/**
 * `lastSettledTurnOnBranch` of the thread's active branch, named by the thread row: a read that
 * can go out with the statement locking that row (under that lock the active branch cannot change).
 */
export async function lastSettledTurnOnActiveBranch(
  q: Queryable,
  threadId: string,
): Promise<TurnRow | undefined> {
  const [row] = await selectLastSettledTurnOnActiveBranch(q, { threadId });
  return row;
}

/** Read by every send (S5, in case it runs now): built once (preparedQuery). */
const selectLastSettledTurnOnActiveBranch = preparedQuery('last_settled_turn_of_thread', (q) =>
  q
    .select()
    .from(turns)
    .where(
      and(
        eq(
          turns.branchId,
          sql`(select ${schema.threads.activeBranchId} from ${schema.threads} where ${schema.threads.id} = ${sql.placeholder('threadId')})`,
        ),
        statusIn('settled'),
        isNull(turns.removedAt),
      ),
    )
    .orderBy(desc(turns.queuePosition))
    .limit(1),
);
