import { type Database, preparedSql, type Queryable } from '@chat/db';
import { type SQL, sql } from 'drizzle-orm';
import { textArray } from '../../platform/sqlArrays';
import { transcriptTables } from '../transcript/tables';
import type { LineageRow } from './lineage';

/**
 * The `message_lineage` rows (packages/db/src/lineageSchema.ts): one per user message a branch
 * holds, with its parent. Parents come from the branch's stored order (by `createdAt`, then id,
 * as recall orders it), named by origin id (message_origins maps copies); the statements that read
 * that order are the transcript store's (`transcriptTables`), with the rest of its SQL.
 */

/**
 * Rows as the shown transcript says they are: written when missing or different, deleted when the
 * message is no longer there (self-repair).
 * In its own transaction that first takes the thread row's key-share lock: a settle holds that row
 * locked while it writes a lineage row, so taking the thread first (as every other writer does)
 * keeps the two from deadlocking; rows go in id order, so two repairs cannot either.
 */
export async function repairBranchLineage(
  db: Database,
  threadId: string,
  branchId: string,
  shown: ReadonlyArray<{ messageId: string; parentId: string; createdAt: Date }>,
): Promise<void> {
  if (shown.length === 0) return;
  const stored = await db.execute<{ message_id: string; parent_id: string }>(sql`
    select message_id, parent_id from message_lineage where branch_id = ${branchId}`);
  const parents = new Map(stored.map((row) => [row.message_id, row.parent_id]));
  const stale = shown
    .filter((row) => parents.get(row.messageId) !== row.parentId)
    .sort((a, b) => (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0));
  const shownIds = new Set(shown.map((row) => row.messageId));
  const gone = [...parents.keys()].filter((messageId) => !shownIds.has(messageId)).sort();
  if (stale.length === 0 && gone.length === 0) return;
  await db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from threads where id = ${threadId} for key share`);
    // Only rows whose message is really gone from the branch (not one stored since it was read).
    await transcriptTables.deleteLineageOfGoneMessages(tx, branchId, gone);
    if (stale.length === 0) return;
    await tx.execute(sql`
      insert into message_lineage (thread_id, branch_id, message_id, parent_id, created_at)
      select ${threadId}, ${branchId}, r.message_id, r.parent_id, r.created_at
      from unnest(
        ${textArray(stale.map((row) => row.messageId))},
        ${textArray(stale.map((row) => row.parentId))},
        ${textArray(stale.map((row) => row.createdAt.toISOString()))}::timestamptz[]
      ) with ordinality as r(message_id, parent_id, created_at, n)
      order by r.n
      on conflict (branch_id, message_id) do update
        set parent_id = excluded.parent_id, created_at = excluded.created_at`);
  });
}

/** Forgets user messages deleted from a branch (by origin id). */
export async function deleteLineage(q: Queryable, branchId: string, messageIds: string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await q.execute(sql`
    delete from message_lineage
    where branch_id = ${branchId} and message_id = any(${textArray(messageIds)})`);
}

/**
 * Those of `messageIds` (origin ids) that a live branch of the thread still holds: a version made
 * after them keeps copies of them, and their images with it.
 */
export async function heldMessageIds(
  q: Queryable,
  threadId: string,
  messageIds: readonly string[],
): Promise<Set<string>> {
  if (messageIds.length === 0) return new Set();
  const rows = await q.execute<{ message_id: string }>(sql`
    select distinct l.message_id from message_lineage l
    join branches b on b.id = l.branch_id and b.removed_at is null
    where l.thread_id = ${threadId} and l.message_id = any(${textArray([...messageIds])})`);
  return new Set(rows.map((row) => row.message_id));
}

/**
 * The other live branches' user messages that are versions of the shown ones: rows whose parent is
 * the parent of a shown user message, but which are not themselves shown (ADR-056). Only parents
 * the thread has as forks (`lineage_forks`) can hold such a row, so only their rows are read: a
 * handful per version, whatever the chat's length; a thread without edits reads none. What is
 * shown is matched here, not sent: the rows are few, the shown messages can be thousands.
 */
export async function listSiblingRows(
  q: Queryable,
  threadId: string,
  activeBranchId: string,
  shown: ReadonlyArray<{ messageId: string; parentId: string }>,
): Promise<LineageRow[]> {
  if (shown.length === 0) return [];
  const rows = await selectForkRows(q, { threadId, activeBranchId });
  if (rows.length === 0) return [];
  const shownIds = new Set<string>();
  const shownParents = new Set<string>();
  for (const row of shown) {
    shownIds.add(row.messageId);
    shownParents.add(row.parentId);
  }
  return rows
    .filter((row) => shownParents.has(row.parent_id) && !shownIds.has(row.message_id))
    .map((row) => ({
      branchId: row.branch_id,
      lastActiveAt: new Date(row.last_active_at),
      messageId: row.message_id,
      parentId: row.parent_id,
      createdAt: new Date(row.created_at),
    }));
}

/** Read by every thread detail: built once (preparedSql). */
const selectForkRows = preparedSql<
  { threadId: string; activeBranchId: string },
  { message_id: string; parent_id: string; branch_id: string; created_at: string; last_active_at: string }
>(
  'lineage_fork_rows',
  sql`
    select l.message_id, l.parent_id, l.branch_id, ${isoText(sql`l.created_at`)} as created_at,
      ${isoText(sql`b.last_active_at`)} as last_active_at
    from message_lineage l
    join branches b on b.id = l.branch_id and b.removed_at is null
    where l.thread_id = ${sql.placeholder('threadId')}
      and l.parent_id = any(array(
        select f.parent_id from lineage_forks f where f.thread_id = ${sql.placeholder('threadId')}))
      and l.branch_id <> ${sql.placeholder('activeBranchId')}`,
);

/** A timestamp as ISO text a JS Date parses (milliseconds, as a JS Date holds it). */
function isoText(column: SQL) {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
