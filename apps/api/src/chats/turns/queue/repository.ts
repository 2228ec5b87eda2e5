import { refusalMessages } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, eq, sql } from 'drizzle-orm';
import { ApiError, InvariantError, notFound } from '../../../platform/errors';
import { statusIn } from '../lifecycle';
import { findTurn } from '../repository';
import { queueOrder } from './order';

const turns = schema.chatTurnRequests;

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
