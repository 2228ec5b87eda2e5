import { inStatusGroup } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, asc, desc, eq, inArray, isNull, lt, or, type SQL, sql } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';
import { textArray } from '../../platform/sqlArrays';
import { statusIn } from './lifecycle';

const turns = schema.chatTurnRequests;

/** A turn some instance's runner is producing (it has a lease). */
const running = eq(turns.status, 'running');

export async function findTurn(q: Queryable, threadId: string, turnId: string): Promise<TurnRow | undefined> {
  const [row] = await q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, threadId), eq(turns.id, turnId)));
  return row;
}

export async function findTurnByClientRequestId(
  q: Queryable,
  threadId: string,
  clientRequestId: string,
): Promise<TurnRow | undefined> {
  const [row] = await q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, threadId), eq(turns.clientRequestId, clientRequestId)));
  return row;
}

/** The thread's active turn (running, or awaiting an approval), if any. */
export async function findActiveTurn(q: Queryable, threadId: string): Promise<TurnRow | undefined> {
  const [row] = await q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, threadId), statusIn('active')));
  return row;
}

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

/** Turns whose user message or reply is among `messageIds`. */
export async function listTurnsOfMessages(
  q: Queryable,
  threadId: string,
  messageIds: string[],
): Promise<TurnRow[]> {
  if (messageIds.length === 0) return [];
  return await q
    .select()
    .from(turns)
    .where(
      and(
        eq(turns.threadId, threadId),
        or(
          sql`${turns.userMessageId} = any(${textArray(messageIds)})`,
          sql`${turns.assistantMessageId} = any(${textArray(messageIds)})`,
        ),
      ),
    );
}

/**
 * The thread's queue in run order: pending steers first, then steers the running reply missed
 * (requeued at the head, in the order they were sent), then the rest in the order they were sent.
 */
export async function listQueuedTurns(q: Queryable, threadId: string): Promise<TurnRow[]> {
  return await q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, threadId), statusIn('waiting')))
    .orderBy(desc(sql`${turns.status} = 'steer_pending'`), desc(turns.steer), asc(turns.seq));
}

/** A turn the Dock may edit or delete. */
export function isEditable(turn: TurnRow): boolean {
  return inStatusGroup('editable', turn.status);
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

/** Another turn ran on `turn`'s branch before it (the branch is not a version fresh from an edit). */
export async function hasEarlierTurnOnBranch(q: Queryable, turn: TurnRow): Promise<boolean> {
  const [row] = await q
    .select({ id: turns.id })
    .from(turns)
    .where(
      and(
        eq(turns.branchId, turn.branchId),
        lt(turns.seq, turn.seq),
        statusIn('ran'),
        isNull(turns.removedAt),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * The turns whose messages were deleted (by stored message id, or every turn that ran on a removed
 * version): their text goes too, and they no longer count as the branch's last settled turn.
 * Queued turns have no messages yet and are never matched.
 */
export async function markTurnsRemoved(
  q: Queryable,
  threadId: string,
  which: { messageIds: string[] } | { branchId: string },
): Promise<TurnRow[]> {
  const match =
    'branchId' in which
      ? eq(turns.branchId, which.branchId)
      : which.messageIds.length > 0
        ? or(
            inArray(turns.userMessageId, which.messageIds),
            inArray(turns.assistantMessageId, which.messageIds),
          )
        : undefined;
  if (!match) return [];
  return await q
    .update(turns)
    .set({ text: '', partialText: '', removedAt: new Date() })
    .where(and(eq(turns.threadId, threadId), match, statusIn('ran'), isNull(turns.removedAt)))
    .returning();
}

/** A queued turn's new text, and its images when they change (`attachments` given). */
export async function updateQueuedTurnText(
  q: Queryable,
  turnId: string,
  text: string,
  attachments?: TurnRow['attachments'],
): Promise<TurnRow> {
  const [row] = await q
    .update(turns)
    .set(attachments ? { text, attachments } : { text })
    .where(eq(turns.id, turnId))
    .returning();
  if (!row) throw new InvariantError(`turn ${turnId} vanished`);
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
