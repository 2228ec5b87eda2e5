import { type ChatMessageMetadata, turnErrorMessages } from '@chat/contracts';
import type { Queryable } from '@chat/db';
import { listTurnsOfMessages } from './repository';

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
      turn.status === 'failed' ? { failed: true, error: turn.error ?? turnErrorMessages.unknown } : {};
    if (turn.userMessageId) {
      metadata.set(turn.userMessageId, { turnId: turn.id, ...(turn.assistantMessageId ? {} : failed) });
    }
    if (!turn.assistantMessageId) continue;
    metadata.set(turn.assistantMessageId, {
      turnId: turn.id,
      ...(turn.status === 'interrupted' ? { interrupted: true } : {}),
      ...failed,
      ...(turn.model ? { model: turn.model } : {}),
      ...(turn.usage ? { usage: turn.usage } : {}),
    });
  }
  return metadata;
}
