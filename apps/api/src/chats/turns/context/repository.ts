import { type ContextMarkerRow, preparedQuery, preparedSql, type Queryable, schema } from '@chat/db';
import { and, desc, eq, sql } from 'drizzle-orm';
import { textArrayLiteral } from '../../../platform/sqlArrays';

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
  rows: ReadonlyArray<typeof messageTokenCounts.$inferInsert>,
): Promise<void> {
  if (rows.length === 0) return;
  // In one order by key, whoever writes them (a settle's, a measure's at once): rows taken in
  // different orders could each wait on the other's; in one order one waits, then finds them
  // written.
  const sorted = [...rows].sort(byKey);
  // However many rows, one statement of one shape: each column one array.
  await insertTokenCountRows(q, {
    threadIds: textArrayLiteral(sorted.map((row) => row.threadId)),
    messageIds: textArrayLiteral(sorted.map((row) => row.messageId)),
    encodings: textArrayLiteral(sorted.map((row) => row.encoding)),
    tokens: textArrayLiteral(sorted.map((row) => String(row.tokens))),
  });
}

type TokenCountRow = typeof messageTokenCounts.$inferInsert;

/** The order of the table's key (thread, message, encoding). */
function byKey(a: TokenCountRow, b: TokenCountRow): number {
  return (
    compare(a.threadId, b.threadId) || compare(a.messageId, b.messageId) || compare(a.encoding, b.encoding)
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Written as every turn starts (the last turn's messages counted): built once (preparedSql). */
const insertTokenCountRows = preparedSql<Record<'threadIds' | 'messageIds' | 'encodings' | 'tokens', string>>(
  'token_counts',
  sql`
    insert into ${messageTokenCounts} (thread_id, message_id, encoding, tokens)
    select * from unnest(
      ${sql.placeholder('threadIds')}::text[]::uuid[],
      ${sql.placeholder('messageIds')}::text[],
      ${sql.placeholder('encodings')}::text[],
      ${sql.placeholder('tokens')}::text[]::int[])
    on conflict do nothing`,
);
