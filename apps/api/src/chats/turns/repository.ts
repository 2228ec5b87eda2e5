import type { Queryable, TurnRow } from '@chat/db';
import { preparedQuery, preparedSql, schema } from '@chat/db';
import { and, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { textArray } from '../../platform/sqlArrays';
import { statusIn } from './lifecycle';

/**
 * The turn rows every lifecycle reads: by id, by the client's request id, the thread's active turn,
 * and the turns behind stored messages. Each lifecycle's own queries are in its folder.
 */

const turns = schema.chatTurnRequests;

// The reads of every send and settle: built once (preparedQuery).
const selectTurn = preparedQuery('turn_by_id', (q) =>
  q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, sql.placeholder('threadId')), eq(turns.id, sql.placeholder('turnId')))),
);
const selectTurnByClientRequestId = preparedQuery('turn_by_client_request', (q) =>
  q
    .select()
    .from(turns)
    .where(
      and(
        eq(turns.threadId, sql.placeholder('threadId')),
        eq(turns.clientRequestId, sql.placeholder('clientRequestId')),
      ),
    ),
);
const selectActiveTurn = preparedQuery('active_turn', (q) =>
  q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, sql.placeholder('threadId')), statusIn('active'))),
);

export async function findTurn(q: Queryable, threadId: string, turnId: string): Promise<TurnRow | undefined> {
  const [row] = await selectTurn(q, { threadId, turnId });
  return row;
}

export async function findTurnByClientRequestId(
  q: Queryable,
  threadId: string,
  clientRequestId: string,
): Promise<TurnRow | undefined> {
  const [row] = await selectTurnByClientRequestId(q, { threadId, clientRequestId });
  return row;
}

/** The thread's active turn (running, or awaiting an approval), if any. */
export async function findActiveTurn(q: Queryable, threadId: string): Promise<TurnRow | undefined> {
  const [row] = await selectActiveTurn(q, { threadId });
  return row;
}

export async function hasActiveTurn(q: Queryable, threadId: string): Promise<boolean> {
  return (await findActiveTurn(q, threadId)) !== undefined;
}

/** The turns of `threadId` whose user message or reply is among `messageIds` (one array, sent once). */
function ofMessages(threadId: string, messageIds: string[]) {
  const ids = textArray(messageIds);
  return and(
    eq(turns.threadId, threadId),
    or(sql`${turns.userMessageId} = any(${ids})`, sql`${turns.assistantMessageId} = any(${ids})`),
  );
}

/** Turns whose user message or reply is among `messageIds`. */
export async function listTurnsOfMessages(
  q: Queryable,
  threadId: string,
  messageIds: string[],
): Promise<TurnRow[]> {
  if (messageIds.length === 0) return [];
  return await q.select().from(turns).where(ofMessages(threadId, messageIds));
}

/** What a message's marks are made of (marks.ts): the few columns of a turn they read. */
export type TurnMarkRow = Pick<
  TurnRow,
  'id' | 'status' | 'error' | 'userMessageId' | 'assistantMessageId' | 'model' | 'usage' | 'attachments'
>;

/**
 * `listTurnsOfMessages` with only the columns marks read: a thread detail names every shown
 * message, and whole rows (their text, replies' snapshots, timestamps) cost more to send and map
 * than the marks they make.
 */
export async function listTurnMarksOfMessages(
  q: Queryable,
  threadId: string,
  messageIds: string[],
): Promise<TurnMarkRow[]> {
  if (messageIds.length === 0) return [];
  return await q
    .select({
      id: turns.id,
      status: turns.status,
      error: turns.error,
      userMessageId: turns.userMessageId,
      assistantMessageId: turns.assistantMessageId,
      model: turns.model,
      usage: turns.usage,
      attachments: turns.attachments,
    })
    .from(turns)
    .where(ofMessages(threadId, messageIds));
}

/**
 * The count and the sum of the row version marks (a hash of each row's id and `xmin`) of a
 * thread's turns: they change whenever any turn of the thread is added, changed (by any process)
 * or deleted, so marks read from the turns stay right while they do not (ADR-051).
 */
export async function turnRowsMark(q: Queryable, threadId: string): Promise<string> {
  const [row] = await selectTurnRowsMark(q, { threadId });
  return `${row?.turns ?? 0}:${row?.marks ?? '0'}`;
}

/** Read by every thread detail: built once (preparedSql). */
const selectTurnRowsMark = preparedSql<{ threadId: string }, { turns: number; marks: string }>(
  'turn_rows_mark',
  sql`
    select count(*)::int as turns,
      coalesce(sum(hashtextextended(t.id::text || ':' || t.xmin::text, 0)), 0)::text as marks
    from ${turns} t where t.thread_id = ${sql.placeholder('threadId')}`,
);

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
