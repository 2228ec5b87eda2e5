import type { BranchRow, Queryable } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, desc, eq, isNull, ne, or, sql } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';

const { branches, messageOrigins } = schema;

export async function insertBranch(
  q: Queryable,
  values: { id: string; threadId: string; parentBranchId: string; forkMessageId: string },
): Promise<BranchRow> {
  const [row] = await q
    .insert(branches)
    .values({ ...values, memoryThreadId: values.id })
    .returning();
  if (!row) throw new InvariantError('insert returned no branch');
  return row;
}

/** Records which message each copy in a new branch stands for (copy id -> origin id). */
export async function insertMessageOrigins(
  q: Queryable,
  branchId: string,
  origins: Array<{ messageId: string; originId: string }>,
): Promise<void> {
  if (origins.length === 0) return;
  await q.insert(messageOrigins).values(origins.map((origin) => ({ ...origin, branchId })));
}

/** copy id -> origin id for the copied messages of one branch. */
export async function listBranchOrigins(q: Queryable, branchId: string): Promise<Map<string, string>> {
  const rows = await q
    .select({ messageId: messageOrigins.messageId, originId: messageOrigins.originId })
    .from(messageOrigins)
    .where(eq(messageOrigins.branchId, branchId));
  return new Map(rows.map((row) => [row.messageId, row.originId]));
}

/** Read by every send: built once (preparedQuery). */
const selectBranch = preparedQuery('branch_by_id', (q) =>
  q
    .select()
    .from(branches)
    .where(eq(branches.id, sql.placeholder('branchId'))),
);

/**
 * The thread's active branch (the version shown now), named by the thread row: a read that can go
 * out with the statement locking that row, before its answer is back (under that lock the active
 * branch cannot change).
 */
export async function findActiveBranch(q: Queryable, threadId: string): Promise<BranchRow | undefined> {
  const [row] = await selectActiveBranch(q, { threadId });
  return row;
}

/** Read by every send: built once (preparedQuery). */
const selectActiveBranch = preparedQuery('active_branch_of_thread', (q) =>
  q
    .select()
    .from(branches)
    .where(
      eq(
        branches.id,
        sql`(select ${schema.threads.activeBranchId} from ${schema.threads} where ${schema.threads.id} = ${sql.placeholder('threadId')})`,
      ),
    ),
);

export async function findBranch(q: Queryable, branchId: string): Promise<BranchRow | undefined> {
  const [row] = await selectBranch(q, { branchId });
  return row;
}

/** Every branch of the thread, removed versions included. */
export async function listBranches(q: Queryable, threadId: string): Promise<BranchRow[]> {
  return await q.select().from(branches).where(eq(branches.threadId, threadId));
}

export async function findThreadBranch(
  q: Queryable,
  threadId: string,
  branchId: string,
): Promise<BranchRow | undefined> {
  const [row] = await q
    .select()
    .from(branches)
    .where(and(eq(branches.threadId, threadId), eq(branches.id, branchId), isNull(branches.removedAt)));
  return row;
}

export async function markBranchActive(q: Queryable, branchId: string): Promise<void> {
  await q.update(branches).set({ lastActiveAt: new Date() }).where(eq(branches.id, branchId));
}

export async function markBranchRemoved(q: Queryable, branchId: string): Promise<void> {
  await q.update(branches).set({ removedAt: new Date() }).where(eq(branches.id, branchId));
}

/** The thread's branches that still hold a version (not removed). */
export async function listLiveBranches(q: Queryable, threadId: string): Promise<BranchRow[]> {
  return await q
    .select()
    .from(branches)
    .where(and(eq(branches.threadId, threadId), isNull(branches.removedAt)));
}

/** The thread's other branch the person had selected most recently. */
export async function mostRecentOtherBranch(
  q: Queryable,
  threadId: string,
  exceptBranchId: string,
): Promise<BranchRow | undefined> {
  const [row] = await q
    .select()
    .from(branches)
    .where(and(eq(branches.threadId, threadId), ne(branches.id, exceptBranchId), isNull(branches.removedAt)))
    .orderBy(desc(branches.lastActiveAt))
    .limit(1);
  return row;
}

/**
 * The stored ids of copies of `originId` in the thread's live branches, and whether `originId` is
 * itself a copy (then it is not an id the person sees).
 */
export async function findCopiesOfOrigin(
  q: Queryable,
  threadId: string,
  originId: string,
): Promise<{ copyIds: string[]; isCopy: boolean }> {
  const rows = await q
    .select({ messageId: messageOrigins.messageId, originId: messageOrigins.originId })
    .from(messageOrigins)
    .innerJoin(branches, eq(branches.id, messageOrigins.branchId))
    .where(
      and(
        eq(branches.threadId, threadId),
        isNull(branches.removedAt),
        or(eq(messageOrigins.originId, originId), eq(messageOrigins.messageId, originId)),
      ),
    );
  return {
    copyIds: rows.filter((row) => row.originId === originId).map((row) => row.messageId),
    isCopy: rows.some((row) => row.messageId === originId),
  };
}
