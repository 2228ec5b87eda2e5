import type { Queryable } from '@chat/db';
import { sql } from 'drizzle-orm';
import type { LineageRow } from '../../src/chats/branches/lineage';
import { textArray } from '../../src/platform/sqlArrays';

/**
 * The versions query thread detail ran before ADR-056, kept to compare with: every lineage row of
 * the thread's other live branches whose parent is a shown user message's parent, and which is not
 * itself shown (the shown messages sent as two arrays). `explain`: its plan, run (EXPLAIN ANALYZE).
 */
export async function scanSiblingRows(
  q: Queryable,
  threadId: string,
  activeBranchId: string,
  shown: ReadonlyArray<{ messageId: string; parentId: string }>,
): Promise<LineageRow[]> {
  const rows = await q.execute<{
    message_id: string;
    parent_id: string;
    branch_id: string;
    created_at: Date | string;
    last_active_at: Date | string;
  }>(statement(threadId, activeBranchId, shown));
  return rows.map((row) => ({
    branchId: row.branch_id,
    lastActiveAt: new Date(row.last_active_at),
    messageId: row.message_id,
    parentId: row.parent_id,
    createdAt: new Date(row.created_at),
  }));
}

/** Its plan as run: `EXPLAIN (ANALYZE, BUFFERS)`'s JSON. */
export async function explainSiblingScan(
  q: Queryable,
  threadId: string,
  activeBranchId: string,
  shown: ReadonlyArray<{ messageId: string; parentId: string }>,
): Promise<Record<string, unknown>> {
  const [row] = await q.execute<{ 'QUERY PLAN': Array<Record<string, unknown>> }>(
    sql`explain (analyze, buffers, format json) ${statement(threadId, activeBranchId, shown)}`,
  );
  return row?.['QUERY PLAN'][0] ?? {};
}

function statement(
  threadId: string,
  activeBranchId: string,
  shown: ReadonlyArray<{ messageId: string; parentId: string }>,
) {
  return sql`
    with shown as (
      select * from unnest(
        ${textArray(shown.map((row) => row.messageId))},
        ${textArray(shown.map((row) => row.parentId))}
      ) as s(message_id, parent_id)
    )
    select l.message_id, l.parent_id, l.branch_id, l.created_at, b.last_active_at
    from message_lineage l
    join branches b on b.id = l.branch_id and b.removed_at is null
    where l.thread_id = ${threadId} and l.branch_id <> ${activeBranchId}
      and l.parent_id in (select parent_id from shown)
      and not exists (select 1 from shown where shown.message_id = l.message_id)`;
}
