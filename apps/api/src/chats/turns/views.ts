import type { ChatMessageMetadata, Turn, TurnQueue } from '@chat/contracts';
import type { Queryable } from '@chat/db';
import { isQueuePaused } from '../threads/repository';
import { toTurn, toTurnQueue } from './dto';
import { findActiveTurn, findTurn, listQueuedTurns, listTurnsOfMessages } from './repository';

/** What the layers above read of turns: contract DTOs, never rows. */

/** The thread's running turn and its queue in run order. */
export async function readTurnQueue(q: Queryable, threadId: string): Promise<TurnQueue> {
  return toTurnQueue(
    await findActiveTurn(q, threadId),
    await listQueuedTurns(q, threadId),
    await isQueuePaused(q, threadId),
  );
}

export async function hasActiveTurn(q: Queryable, threadId: string): Promise<boolean> {
  return (await findActiveTurn(q, threadId)) !== undefined;
}

export async function readTurn(q: Queryable, threadId: string, turnId: string): Promise<Turn | undefined> {
  const row = await findTurn(q, threadId, turnId);
  return row && toTurn(row);
}

/**
 * What the API knows of each message (it owns interrupt state, O2): the turn it belongs to, and
 * whether a reply was interrupted or is a failed attempt waiting at the queue head (Q11: the reply
 * gets `failed` and `error`, or the user message does when the attempt failed before any text).
 * Keyed by message id as streamed, which is also the origin id of its copies in other versions, so
 * they share the marks.
 */
export async function readMessageMarks(
  q: Queryable,
  threadId: string,
  messageIds: string[],
): Promise<Map<string, ChatMessageMetadata>> {
  const metadata = new Map<string, ChatMessageMetadata>();
  for (const turn of await listTurnsOfMessages(q, threadId, messageIds)) {
    const failed =
      turn.status === 'failed'
        ? { failed: true, error: turn.error ?? 'The reply could not be produced.' }
        : {};
    if (turn.userMessageId) {
      metadata.set(turn.userMessageId, { turnId: turn.id, ...(turn.assistantMessageId ? {} : failed) });
    }
    if (!turn.assistantMessageId) continue;
    metadata.set(turn.assistantMessageId, {
      turnId: turn.id,
      ...(turn.status === 'interrupted' ? { interrupted: true } : {}),
      ...failed,
      ...(turn.model ? { model: turn.model } : {}),
    });
  }
  return metadata;
}
