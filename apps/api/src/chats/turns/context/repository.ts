import { type ContextMarkerRow, preparedQuery, type Queryable, schema } from '@chat/db';
import { and, desc, eq, sql } from 'drizzle-orm';

const { contextMarkers, messageOrigins, messageTokenCounts } = schema;

/** Read as every turn starts and settles (the window and the meter): built once (preparedQuery). */
const selectLatestMarker = preparedQuery('latest_context_marker', (q) =>
  q
    .select()
    .from(contextMarkers)
    .where(eq(contextMarkers.branchId, sql.placeholder('branchId')))
    .orderBy(desc(contextMarkers.createdAt))
    .limit(1),
);

/** The branch's latest context marker (C3): where the model's view of it starts now. */
export async function findLatestMarker(
  q: Queryable,
  branchId: string,
): Promise<ContextMarkerRow | undefined> {
  const [row] = await selectLatestMarker(q, { branchId });
  return row;
}

/**
 * A new marker after `previousId` (null: the branch's first). Undefined when another one already
 * followed it (two compactions of one branch raced): the caller uses that one.
 */
export async function insertMarker(
  q: Queryable,
  values: typeof contextMarkers.$inferInsert,
): Promise<ContextMarkerRow | undefined> {
  const [row] = await q.insert(contextMarkers).values(values).onConflictDoNothing().returning();
  return row;
}

/** The id a person sees for a branch's stored message (a copy's origin, else its own id). */
export async function originOfMessage(q: Queryable, branchId: string, messageId: string): Promise<string> {
  const [row] = await q
    .select({ originId: messageOrigins.originId })
    .from(messageOrigins)
    .where(and(eq(messageOrigins.branchId, branchId), eq(messageOrigins.messageId, messageId)));
  return row?.originId ?? messageId;
}

/** Token counts of messages, counted once; a count already stored (a racing reader) stays. */
export async function insertTokenCounts(
  q: Queryable,
  rows: Array<typeof messageTokenCounts.$inferInsert>,
): Promise<void> {
  if (rows.length === 0) return;
  await q.insert(messageTokenCounts).values(rows).onConflictDoNothing();
}
