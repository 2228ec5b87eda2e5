import type { DrainMode, ToolMode } from '@chat/contracts';
import type { BranchRow, Queryable, ThreadRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, desc, eq, inArray, ne, sql } from 'drizzle-orm';
import { InvariantError, notFound } from '../../platform/errors';

const { threads, branches, chatTurnRequests: turns } = schema;

export async function insertThreadWithRootBranch(
  q: Queryable,
  values: {
    ownerId: string;
    title: string;
    titled: boolean;
    drainMode: DrainMode;
    model?: string;
    /** A1: an agent chat's workspace and directory. */
    workspaceId?: string;
    workspacePath?: string;
  },
): Promise<{ thread: ThreadRow; branch: BranchRow }> {
  const [created] = await q.insert(threads).values(values).returning();
  if (!created) throw new InvariantError('insert returned no thread');
  const branchId = crypto.randomUUID();
  const [branch] = await q
    .insert(branches)
    .values({ id: branchId, threadId: created.id, memoryThreadId: branchId })
    .returning();
  if (!branch) throw new InvariantError('insert returned no branch');
  const [thread] = await q
    .update(threads)
    .set({ activeBranchId: branch.id })
    .where(eq(threads.id, created.id))
    .returning();
  if (!thread) throw new InvariantError('thread vanished');
  return { thread, branch };
}

/**
 * The thread if `ownerId` owns it, else `404 not_found`: a foreign thread is simply not found (O3).
 * With `lock`, the row stays locked for the rest of the transaction. Every decision about a
 * thread's turns (accept, claim, settle, edit) takes this lock first, so they serialise per thread
 * across instances.
 */
export async function requireOwnedThread(
  q: Queryable,
  threadId: string,
  ownerId: string,
  options: { lock?: boolean } = {},
): Promise<ThreadRow> {
  const [row] = await (options.lock ? selectOwnedThreadForUpdate : selectOwnedThread)(q, {
    threadId,
    ownerId,
  });
  if (!row) throw notFound();
  return row;
}

// Every request about a thread starts with one of these three: built once (preparedQuery).
const ownedThread = (q: Queryable) =>
  q
    .select()
    .from(threads)
    .where(and(eq(threads.id, sql.placeholder('threadId')), eq(threads.ownerId, sql.placeholder('ownerId'))));
const selectOwnedThread = preparedQuery('owned_thread', ownedThread);
const selectOwnedThreadForUpdate = preparedQuery('owned_thread_locked', (q) => ownedThread(q).for('update'));
const selectThreadForUpdate = preparedQuery('thread_locked', (q) =>
  q
    .select()
    .from(threads)
    .where(eq(threads.id, sql.placeholder('threadId')))
    .for('update'),
);

/** Locks the thread row whoever owns it (the runner and recovery settle turns this way). */
/** The thread's shown version; every thread has one from its creation on. */
export function activeBranchIdOf(thread: ThreadRow): string {
  if (!thread.activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
  return thread.activeBranchId;
}

export async function lockThread(q: Queryable, threadId: string): Promise<ThreadRow | undefined> {
  const [row] = await selectThreadForUpdate(q, { threadId });
  return row;
}

/** Where a page of the thread list starts: after this (updated_at, id), newest first. */
export interface ThreadListPosition {
  /** `updated_at` to the microsecond, as PostgreSQL wrote it (a JS Date keeps milliseconds only). */
  updatedAt: string;
  id: string;
}

/**
 * Up to `limit` threads of the owner, newest activity first, after `after` (keyset pagination on the
 * `threads_owner_updated_id_idx` index: each page is one index range, however deep). Each row comes
 * with its own position, for the next page's cursor.
 */
export async function listThreadPage(
  q: Queryable,
  ownerId: string,
  limit: number,
  after?: ThreadListPosition,
): Promise<Array<{ row: ThreadRow; position: ThreadListPosition }>> {
  const rows = await q
    .select({
      row: threads,
      updatedAt: sql<string>`to_char(${threads.updatedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    })
    .from(threads)
    .where(
      and(
        eq(threads.ownerId, ownerId),
        after
          ? sql`(${threads.updatedAt}, ${threads.id}) < (${after.updatedAt}::timestamptz, ${after.id}::uuid)`
          : undefined,
      ),
    )
    .orderBy(desc(threads.updatedAt), desc(threads.id))
    .limit(limit);
  return rows.map(({ row, updatedAt }) => ({ row, position: { updatedAt, id: row.id } }));
}

export async function updateThread(
  q: Queryable,
  threadId: string,
  changes: Partial<Pick<ThreadRow, 'title' | 'titled' | 'activeBranchId'>>,
): Promise<ThreadRow> {
  const updatedAt = new Date();
  const { title, titled, activeBranchId } = changes;
  // The two shapes every send writes (activity, or activity and the first message's title) are
  // prepared; the rarer ones (a rename, a version shown) are built as they come.
  const [row] =
    activeBranchId === undefined && title === undefined && titled === undefined
      ? await touchThread(q, { threadId, updatedAt: updatedAt.toISOString() })
      : activeBranchId === undefined && title !== undefined && titled !== undefined
        ? await touchThreadTitled(q, { threadId, updatedAt: updatedAt.toISOString(), title, titled })
        : await q
            .update(threads)
            .set({ ...changes, updatedAt })
            .where(eq(threads.id, threadId))
            .returning();
  if (!row) throw new InvariantError(`thread ${threadId} vanished`);
  return row;
}

// Written by every send (its thread's activity): built once (preparedQuery). A prepared
// statement's parameter goes as the server typed it: a timestamp as text.
const updatedAtValue = sql`${sql.placeholder('updatedAt')}::timestamptz`;
const touchThread = preparedQuery('thread_touch', (q) =>
  q
    .update(threads)
    .set({ updatedAt: updatedAtValue })
    .where(eq(threads.id, sql.placeholder('threadId')))
    .returning(),
);
const touchThreadTitled = preparedQuery('thread_touch_titled', (q) =>
  q
    .update(threads)
    .set({
      title: sql`${sql.placeholder('title')}`,
      titled: sql`${sql.placeholder('titled')}::boolean`,
      updatedAt: updatedAtValue,
    })
    .where(eq(threads.id, sql.placeholder('threadId')))
    .returning(),
);

export async function deleteThreadRow(q: Queryable, threadId: string): Promise<void> {
  // Branch rows reference the thread and each other; the thread's own FK to its active branch
  // must be cleared first so the cascade can run.
  await q.update(threads).set({ activeBranchId: null }).where(eq(threads.id, threadId));
  await q.delete(threads).where(eq(threads.id, threadId));
}

/** Pausing is not activity: the thread keeps its place in the list. */
export async function setQueuePaused(q: Queryable, threadId: string, paused: boolean): Promise<void> {
  await q.update(threads).set({ queuePaused: paused }).where(eq(threads.id, threadId));
}

/**
 * Who runs the thread's queue (Q15). Not activity: the chat keeps its place in the list (unlike a
 * rename, which bumps `updated_at`).
 */
export async function setDrainMode(q: Queryable, threadId: string, mode: DrainMode): Promise<ThreadRow> {
  const [row] = await q.update(threads).set({ drainMode: mode }).where(eq(threads.id, threadId)).returning();
  if (!row) throw new InvariantError(`thread ${threadId} vanished`);
  return row;
}

/** `%`, `_` and `\` match themselves in a LIKE pattern. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * The owner's threads whose title or any message they sent holds `text` (case-insensitive),
 * most recently active first, at most `limit`; with the latest matching message, if any.
 * Bounded by the owner's index and `limit`; message texts are the turns' (what people typed).
 */
export async function searchThreadsByOwner(
  q: Queryable,
  ownerId: string,
  text: string,
  limit: number,
): Promise<Array<{ thread: ThreadRow; matchedText: string | null }>> {
  const pattern = likePattern(text);
  const matchingTurn = sql`${turns.threadId} = ${threads.id} and ${turns.status} <> 'cancelled' and ${turns.text} ilike ${pattern}`;
  const rows = await q
    .select({
      thread: threads,
      matchedText: sql<
        string | null
      >`(select ${turns.text} from ${turns} where ${matchingTurn} order by ${turns.seq} desc limit 1)`,
    })
    .from(threads)
    .where(
      and(
        eq(threads.ownerId, ownerId),
        sql`(${threads.title} ilike ${pattern} or exists (select 1 from ${turns} where ${matchingTurn}))`,
      ),
    )
    .orderBy(desc(threads.updatedAt), desc(threads.createdAt))
    .limit(limit);
  return rows;
}

/** The chat's changed tool modes (T1). Not activity, like the drain mode. */
export async function setToolModes(
  q: Queryable,
  threadId: string,
  modes: Record<string, ToolMode>,
): Promise<ThreadRow> {
  const [row] = await q.update(threads).set({ toolModes: modes }).where(eq(threads.id, threadId)).returning();
  if (!row) throw new InvariantError(`thread ${threadId} vanished`);
  return row;
}

/** A chat's tool settings as read: what its owner changed, and whether it is an agent chat. */
export interface ChatToolModes {
  modes: Record<string, ToolMode>;
  agentChat: boolean;
}

/**
 * The chat's tool settings as a run reads them (T2): what its owner changed, and whether it is an
 * agent chat (A5: its tools are the agent's, and only what was changed overrides the agent's own
 * rules).
 */
export async function readToolModes(q: Queryable, threadId: string): Promise<ChatToolModes> {
  const [row] = await selectToolModes(q, { threadId });
  return toolModesOf(row);
}

/** A chat's tool settings from its row's two columns (absent row: no settings, not an agent chat). */
export function toolModesOf(
  row: { toolModes: ThreadRow['toolModes'] | null; workspaceId: string | null } | undefined,
): ChatToolModes {
  return { modes: row?.toolModes ?? {}, agentChat: row?.workspaceId != null };
}

/** Read before every step of every reply: built once (preparedQuery). */
const selectToolModes = preparedQuery('thread_tool_modes', (q) =>
  q
    .select({ toolModes: threads.toolModes, workspaceId: threads.workspaceId })
    .from(threads)
    .where(eq(threads.id, sql.placeholder('threadId'))),
);

/**
 * A1: the account `workspaceId` belongs to, taking it for `ownerId` when it is nobody's yet (one
 * statement: two accounts taking it at once cannot both have it).
 */
export async function claimWorkspace(q: Queryable, workspaceId: string, ownerId: string): Promise<string> {
  const owners = schema.agentWorkspaceOwners;
  // A claim made by another transaction that committed after this statement began is not in its
  // snapshot (the insert waited for it and did nothing): the second try's statement sees it.
  for (let attempt = 0; attempt < 2; attempt++) {
    const rows = await q.execute<{ owner_id: string }>(sql`
      WITH taken AS (
        INSERT INTO ${owners} (workspace_id, owner_id) VALUES (${workspaceId}, ${ownerId})
        ON CONFLICT (workspace_id) DO NOTHING
        RETURNING owner_id
      )
      SELECT owner_id FROM taken
      UNION ALL
      SELECT owner_id FROM ${owners} WHERE workspace_id = ${workspaceId}
      LIMIT 1`);
    const [row] = rows;
    if (row) return row.owner_id;
  }
  throw new InvariantError('a workspace claim found no owner');
}

/** A1: of these workspaces, the ones another account has taken. */
export async function workspacesTakenByOthers(
  q: Queryable,
  workspaceIds: string[],
  ownerId: string,
): Promise<Set<string>> {
  if (workspaceIds.length === 0) return new Set();
  const owners = schema.agentWorkspaceOwners;
  const rows = await q
    .select({ workspaceId: owners.workspaceId })
    .from(owners)
    .where(and(inArray(owners.workspaceId, workspaceIds), ne(owners.ownerId, ownerId)));
  return new Set(rows.map((row) => row.workspaceId));
}
