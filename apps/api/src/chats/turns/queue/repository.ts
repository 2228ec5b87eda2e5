import type { Queryable, TurnRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq } from 'drizzle-orm';
import { InvariantError } from '../../../platform/errors';
import { statusIn } from '../lifecycle';
import { queueOrder } from './order';

const turns = schema.chatTurnRequests;

/** The thread's waiting items (the Dock), in queue order: the first is the head. */
export async function listWaitingTurns(q: Queryable, threadId: string): Promise<TurnRow[]> {
  return await q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, threadId), statusIn('waiting')))
    .orderBy(...queueOrder());
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
