import type { Database, Queryable } from '@chat/db';
import { type SQL, sql } from 'drizzle-orm';
import { textArray } from '../../platform/sqlArrays';
import type { LineageRow } from './lineage';

/**
 * The `message_lineage` rows (packages/db/src/lineageSchema.ts): one per user message a branch
 * holds, with its parent. Parents come from the branch's stored order in Mastra's table (by
 * `createdAt`, then id, as recall orders it), named by origin id (message_origins maps copies).
 */

const MESSAGES = sql`mastra.mastra_messages`;
const CREATED_AT = sql`coalesce(m."createdAtZ", m."createdAt" at time zone 'UTC')`;

/**
 * Writes the rows of every user message of a branch from its stored transcript (a new version's
 * copies). Linear in the branch's length; run where the branch was just made.
 */
export async function writeBranchLineage(q: Queryable, branchId: string): Promise<void> {
  await q.execute(sql`
    insert into message_lineage (thread_id, branch_id, message_id, parent_id, created_at)
    select s.thread_id, s.branch_id, s.origin, coalesce(s.parent, ''), s.created
    from (
      select b.thread_id, b.id as branch_id, m.role, coalesce(o.origin_id, m.id) as origin,
        lag(coalesce(o.origin_id, m.id)) over (order by m."createdAt", m.id) as parent,
        ${CREATED_AT} as created
      from branches b
      join ${MESSAGES} m on m.thread_id = b.memory_thread_id and m.role <> 'system'
      left join message_origins o on o.branch_id = b.id and o.message_id = m.id
      where b.id = ${branchId}
    ) s
    where s.role = 'user'
    on conflict (branch_id, message_id) do update
      set parent_id = excluded.parent_id, created_at = excluded.created_at`);
}

/**
 * Writes the row of one stored user message of a branch (a settled turn's), its parent being the
 * message stored just before it. Nothing when the message is not (or no longer) stored.
 */
export async function writeUserMessageLineage(
  q: Queryable,
  branchId: string,
  messageId: string,
): Promise<void> {
  await q.execute(sql`
    insert into message_lineage (thread_id, branch_id, message_id, parent_id, created_at)
    select b.thread_id, b.id, coalesce(o.origin_id, m.id),
      coalesce((
        select coalesce(po.origin_id, p.id) from ${MESSAGES} p
        left join message_origins po on po.branch_id = b.id and po.message_id = p.id
        where p.thread_id = m.thread_id and p.role <> 'system' and (p."createdAt", p.id) < (m."createdAt", m.id)
        order by p."createdAt" desc, p.id desc
        limit 1
      ), ''),
      ${CREATED_AT}
    from branches b
    join ${MESSAGES} m on m.thread_id = b.memory_thread_id and m.id = ${messageId} and m.role = 'user'
    left join message_origins o on o.branch_id = b.id and o.message_id = m.id
    where b.id = ${branchId}
    on conflict (branch_id, message_id) do update
      set parent_id = excluded.parent_id, created_at = excluded.created_at`);
}

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
    if (gone.length > 0)
      await tx.execute(sql`
        delete from message_lineage l
        using branches b
        where l.branch_id = ${branchId} and b.id = l.branch_id and l.message_id = any(${textArray(gone)})
          and not exists (
            select 1 from ${MESSAGES} m
            left join message_origins o on o.branch_id = b.id and o.message_id = m.id
            where m.thread_id = b.memory_thread_id and coalesce(o.origin_id, m.id) = l.message_id
          )`);
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
 * the parent of a shown user message, but which are not themselves shown. Touches the thread's
 * parent index only; a thread without edits returns nothing.
 */
export async function listSiblingRows(
  q: Queryable,
  threadId: string,
  activeBranchId: string,
  shown: ReadonlyArray<{ messageId: string; parentId: string }>,
): Promise<LineageRow[]> {
  if (shown.length === 0) return [];
  const rows = await q.execute<{
    message_id: string;
    parent_id: string;
    branch_id: string;
    created_at: string;
    last_active_at: string;
  }>(sql`
    with shown as (
      select * from unnest(
        ${textArray(shown.map((row) => row.messageId))},
        ${textArray(shown.map((row) => row.parentId))}
      ) as s(message_id, parent_id)
    )
    select l.message_id, l.parent_id, l.branch_id, ${isoText(sql`l.created_at`)} as created_at,
      ${isoText(sql`b.last_active_at`)} as last_active_at
    from message_lineage l
    join branches b on b.id = l.branch_id and b.removed_at is null
    where l.thread_id = ${threadId} and l.branch_id <> ${activeBranchId}
      and l.parent_id in (select parent_id from shown)
      and not exists (select 1 from shown where shown.message_id = l.message_id)`);
  return rows.map((row) => ({
    branchId: row.branch_id,
    lastActiveAt: new Date(row.last_active_at),
    messageId: row.message_id,
    parentId: row.parent_id,
    createdAt: new Date(row.created_at),
  }));
}

/** A timestamp as ISO text a JS Date parses (milliseconds, as a JS Date holds it). */
function isoText(column: SQL) {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
