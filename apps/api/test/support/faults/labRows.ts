import type { FaultLab } from './lab';

/** What the fault tests read straight from the lab's database, past the API. */

/** Which of `ids` are stored messages in memory, sorted. */
export async function storedMessageIds(lab: FaultLab, ids: (string | null | undefined)[]): Promise<string[]> {
  const wanted = ids.filter((id): id is string => typeof id === 'string');
  const rows = await lab.postgres.query(
    (sql) => sql<{ id: string }[]>`select id from mastra.mastra_messages where id = any(${wanted})`,
  );
  return rows.map((row) => row.id).sort();
}

/**
 * Sessions other than the caller's waiting on a lock while running a statement like `queryLike`;
 * `waitEvent`: only those waiting on that kind of lock (`relation`, `advisory`, ...).
 */
export async function lockWaiters(lab: FaultLab, queryLike: string, waitEvent?: string): Promise<number> {
  const [row] = await lab.postgres.query(
    (sql) => sql<{ count: number }[]>`
      select count(*)::int as count from pg_stat_activity
      where wait_event_type = 'Lock' and pid <> pg_backend_pid() and query ilike ${queryLike}
        and (${waitEvent ?? null}::text is null or wait_event = ${waitEvent ?? null})`,
  );
  return row?.count ?? 0;
}
