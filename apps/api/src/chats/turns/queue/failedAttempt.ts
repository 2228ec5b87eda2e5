import type { Queryable, TurnRow } from '@chat/db';
import { transcriptTables } from '../../transcript/tables';
import { transitionTurn } from '../lifecycle';
import { markTurnsRemoved } from '../repository';

/**
 * Q11: a failed turn waits at the queue head with its attempt (its user message, and the partial
 * reply if any text came) shown in the transcript. Retry, Edit and Delete each resolve it, and the
 * attempt then leaves memory, so neither the transcript nor the model's context keeps it. The
 * attempt is exactly these two stored messages: the runner removes empty replies when it settles.
 * Called under the thread lock, in the transaction that resolves the turn: a change that rolls
 * back keeps the attempt.
 */
export async function removeFailedAttempt(tx: Queryable, turn: TurnRow): Promise<void> {
  if (turn.status !== 'failed') return;
  const ids = [turn.userMessageId, turn.assistantMessageId].filter((id): id is string => id !== null);
  await transcriptTables.deleteMessages(tx, ids);
  // What the branch holds next goes where the attempt was (a retry's message, another turn's).
  await transcriptTables.markBranchTailFork(tx, turn.branchId);
}

/** The columns that tied a turn to an attempt that is gone. */
export const noAttempt = { userMessageId: null, assistantMessageId: null, partialText: '', error: null };

/**
 * B4: the turns whose messages the person deleted (by stored id, or every turn of a removed
 * version) lose their text; a failed attempt among them is the failed head's, which is then
 * deleted from the queue too (Q11). Returns the turns, and whether the queue changed.
 */
export async function forgetTurnsOfDeletedMessages(
  tx: Queryable,
  threadId: string,
  which: { messageIds: string[] } | { branchId: string },
): Promise<{ removed: TurnRow[]; queueChanged: boolean }> {
  const removed = await markTurnsRemoved(tx, threadId, which);
  const failed = removed.filter((turn) => turn.status === 'failed');
  for (const turn of failed) {
    await transitionTurn(tx, turn, 'cancelled', { ...noAttempt, finishedAt: new Date() });
  }
  return { removed, queueChanged: failed.length > 0 };
}
