import { inStatusGroup, refusalMessages } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, eq, or, sql } from 'drizzle-orm';
import { ApiError, InvariantError, notFound } from '../../../platform/errors';
import { statusIn } from '../lifecycle';
import { findTurn } from '../repository';
import { queueOrder } from './order';

const turns = schema.chatTurnRequests;
const { threads } = schema;

/** The thread's queue as one snapshot: its active turn, its waiting items in order, and the pause. */
export interface QueueRows {
  active: TurnRow | undefined;
  waiting: TurnRow[];
  paused: boolean;
}

/**
 * The queue in one statement, so one snapshot: read apart, a turn that failed between the reads
 * was in neither list (the waiting read saw it running, the active read saw it failed), and a tab
 * showed a Dock without its failed head until the next change. Read by every event and answer
 * that carries the queue: built once (preparedQuery).
 */
export async function readQueueRows(q: Queryable, threadId: string): Promise<QueueRows> {
  const rows = await selectQueueRows(q, { threadId });
  const paused = rows[0]?.paused ?? false;
  const queued = rows.flatMap((row) => (row.turn ? [row.turn] : []));
  return {
    active: queued.find((turn) => inStatusGroup('active', turn.status)),
    waiting: queued.filter((turn) => inStatusGroup('waiting', turn.status)),
    paused,
  };
}

const selectQueueRows = preparedQuery('queue_rows', (q) =>
  q
    .select({ paused: threads.queuePaused, turn: turns })
    .from(threads)
    .leftJoin(turns, and(eq(turns.threadId, threads.id), or(statusIn('active'), statusIn('waiting'))))
    .where(eq(threads.id, sql.placeholder('threadId')))
    .orderBy(...queueOrder()),
);

/** The thread's waiting items (the Dock), in queue order: the first is the head. */
export async function listWaitingTurns(q: Queryable, threadId: string): Promise<TurnRow[]> {
  return await selectWaitingTurns(q, { threadId });
}

/** Read by every send (admission): built once (preparedQuery). */
const selectWaitingTurns = preparedQuery('waiting_turns', (q) =>
  q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, sql.placeholder('threadId')), statusIn('waiting')))
    .orderBy(...queueOrder()),
);

/**
 * One of `waiting` (the thread's waiting items, as read under its lock), by id: `404` when the
 * thread has no such turn, `409 not_queued` when it is no longer waiting (it ran, or was deleted).
 * `role` says which turn of the request it is, for the refusal's words.
 */
export async function requireWaitingTurn(
  q: Queryable,
  threadId: string,
  waiting: readonly TurnRow[],
  turnId: string,
  role: 'item' | 'neighbour' = 'item',
): Promise<TurnRow> {
  const turn = waiting.find((item) => item.id === turnId);
  if (turn) return turn;
  if (!(await findTurn(q, threadId, turnId))) throw notFound('turn');
  const words =
    role === 'item' ? refusalMessages.not_queued.notWaiting : refusalMessages.not_queued.neighbour;
  throw new ApiError('not_queued', words);
}

/** A waiting turn's new text, and its images when they change (`attachments` given). */
export async function updateWaitingTurnText(
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

/** Stores waiting items' new places in the queue (Q13); under the thread lock. */
export async function setQueuePositions(
  q: Queryable,
  places: readonly { turnId: string; position: number }[],
): Promise<void> {
  for (const { turnId, position } of places) {
    await q.update(turns).set({ queuePosition: position }).where(eq(turns.id, turnId));
  }
}
