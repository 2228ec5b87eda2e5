import type { Queryable, TurnRow } from '@chat/db';
import { attachmentIdsOfTurns, deleteUnreferencedAttachments } from '../attachments/repository';
import { heldMessageIds } from './lineageRepository';

/**
 * Deletes the images of turns whose messages were just deleted from a version, unless another
 * message of the thread still shows them: a version that kept them, or a version made later that
 * holds a copy of the deleted message (its lineage row).
 */
export async function releaseImagesOfRemovedTurns(
  q: Queryable,
  threadId: string,
  removedTurns: readonly TurnRow[],
): Promise<void> {
  const held = await heldMessageIds(
    q,
    threadId,
    removedTurns.flatMap((turn) => (turn.userMessageId ? [turn.userMessageId] : [])),
  );
  const released = removedTurns.filter((turn) => !turn.userMessageId || !held.has(turn.userMessageId));
  await deleteUnreferencedAttachments(q, threadId, attachmentIdsOfTurns(released));
}
