import type { Queryable, ReplySnapshot, TurnRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, desc, eq, isNull, lt, sql } from 'drizzle-orm';
import { leaseFromNow, leaseFromNowPlaceholder, leaseInterval } from '../lease';
import { statusIn } from '../lifecycle';

export { leaseFromNow };

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

/** What a running turn's checkpoint writes: the message streaming now and the reply's messages. */
export interface Checkpoint {
  /** The message streaming now, and all of its text. */
  assistantMessageId: string | null;
  partialText: string;
  /** The reply's messages, when a step ended since the last write (else they stay as they are). */
  partialParts?: ReplySnapshot;
}

/**
 * Checkpoints a running turn this runner holds, and renews its lease. Returns false when the turn
 * is no longer this runner's running turn (settled by someone else, or stopped).
 */
export async function checkpointRunningTurn(
  q: Queryable,
  turnId: string,
  runnerId: string,
  leaseMs: number,
  checkpoint: Checkpoint,
): Promise<boolean> {
  const values = {
    turnId,
    runnerId,
    partialText: checkpoint.partialText,
    assistantMessageId: checkpoint.assistantMessageId,
    lease: leaseInterval(leaseMs),
  };
  const rows = checkpoint.partialParts
    ? // As drizzle writes a jsonb column: its JSON text.
      await checkpointWithParts(q, { ...values, partialParts: JSON.stringify(checkpoint.partialParts) })
    : await checkpointText(q, values);
  return rows.length > 0;
}

/**
 * Adds the text that streamed since the last checkpoint (`delta`) to a running turn's checkpoint,
 * sending only the new text however long the reply: only if the stored text is still the
 * `knownBytes` long one this runner wrote last (else nothing changes, and the caller writes the
 * whole text). Renews the lease. Returns whether it was written.
 */
export async function appendCheckpointText(
  q: Queryable,
  turnId: string,
  runnerId: string,
  leaseMs: number,
  text: { delta: string; knownBytes: number },
): Promise<boolean> {
  const rows = await appendText(q, {
    turnId,
    runnerId,
    delta: text.delta,
    knownBytes: text.knownBytes,
    lease: leaseInterval(leaseMs),
  });
  return rows.length > 0;
}

// The checkpoint writes of every streaming reply: built once (preparedQuery).
/** This runner's running turn (the condition of every checkpoint write). */
const ownRunning = and(
  eq(turns.id, sql.placeholder('turnId')),
  running,
  eq(turns.runnerId, sql.placeholder('runnerId')),
);
const checkpointColumns = {
  partialText: sql`${sql.placeholder('partialText')}`,
  assistantMessageId: sql`${sql.placeholder('assistantMessageId')}`,
  leaseExpiresAt: leaseFromNowPlaceholder,
};
const checkpointText = preparedQuery('checkpoint_text', (q) =>
  q.update(turns).set(checkpointColumns).where(ownRunning).returning({ id: turns.id }),
);
const checkpointWithParts = preparedQuery('checkpoint_parts', (q) =>
  q
    .update(turns)
    .set({ ...checkpointColumns, partialParts: sql`${sql.placeholder('partialParts')}::jsonb` })
    .where(ownRunning)
    .returning({ id: turns.id }),
);
const appendText = preparedQuery('checkpoint_append', (q) =>
  q
    .update(turns)
    .set({
      partialText: sql`${turns.partialText} || ${sql.placeholder('delta')}::text`,
      leaseExpiresAt: leaseFromNowPlaceholder,
    })
    .where(and(ownRunning, sql`octet_length(${turns.partialText}) = ${sql.placeholder('knownBytes')}::int`))
    .returning({ id: turns.id }),
);

/**
 * Renews the lease of a turn this runner holds (running, or settling its reply). Returns false
 * when it no longer holds it.
 */
export async function renewLease(
  q: Queryable,
  turnId: string,
  runnerId: string,
  leaseMs: number,
): Promise<boolean> {
  const rows = await q
    .update(turns)
    .set({ leaseExpiresAt: leaseFromNow(leaseMs) })
    .where(and(eq(turns.id, turnId), statusIn('leased'), eq(turns.runnerId, runnerId)))
    .returning({ id: turns.id });
  return rows.length > 0;
}

/**
 * The turn if a runner held it (running, or settling) and its lease expired, by the database's
 * clock (all instances share it).
 */
export async function findOrphanedTurn(q: Queryable, turnId: string): Promise<TurnRow | undefined> {
  const [row] = await q
    .select()
    .from(turns)
    .where(and(eq(turns.id, turnId), statusIn('leased'), lt(turns.leaseExpiresAt, sql`now()`)));
  return row;
}

/** Turns whose runner stopped renewing its lease (a crashed or hung process). */
export async function listOrphanedTurns(q: Queryable): Promise<TurnRow[]> {
  return await q
    .select()
    .from(turns)
    .where(and(statusIn('leased'), lt(turns.leaseExpiresAt, sql`now()`)));
}
