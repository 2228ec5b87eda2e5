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

export async function hasRunningTurn(q: Queryable, threadId: string): Promise<boolean> {
  return (await findActiveTurn(q, threadId)) !== undefined;
}

export async function readTurn(q: Queryable, threadId: string, turnId: string): Promise<Turn | undefined> {
  const row = await findTurn(q, threadId, turnId);
  return row && toTurn(row);
}

/**
 * What the API knows of each message (it owns interrupt state, O2): the turn it belongs to, and
 * whether a reply was interrupted or failed. Keyed by message id as streamed, which is also the
 * origin id of its copies in other versions, so they share the marks.
 */
export async function readMessageMarks(
  q: Queryable,
  threadId: string,
  messageIds: string[],
): Promise<Map<string, ChatMessageMetadata>> {
  const metadata = new Map<string, ChatMessageMetadata>();
  for (const turn of await listTurnsOfMessages(q, threadId, messageIds)) {
    if (turn.userMessageId) metadata.set(turn.userMessageId, { turnId: turn.id });
    if (!turn.assistantMessageId) continue;
    metadata.set(turn.assistantMessageId, {
      turnId: turn.id,
      ...(turn.status === 'interrupted' ? { interrupted: true } : {}),
      ...(turn.status === 'failed' ? { failed: true, error: turn.error ?? 'The reply failed.' } : {}),
      ...(turn.model ? { model: turn.model } : {}),
    });
  }
  return metadata;
}
