import type { TurnRow } from '@chat/db';
import type { Memory } from '@mastra/memory';

/**
 * Q11: a failed turn waits at the queue head with its attempt (its user message, and the partial
 * reply if any text came) shown in the transcript. Retry, Edit and Delete each resolve it, and the
 * attempt then leaves memory, so neither the transcript nor the model's context keeps it. The
 * attempt is exactly these two stored messages: the runner removes empty replies when it settles.
 * Called under the thread lock; the Mastra delete is not part of the caller's transaction.
 */
export async function removeFailedAttempt(memory: Memory, turn: TurnRow): Promise<void> {
  if (turn.status !== 'failed') return;
  const ids = [turn.userMessageId, turn.assistantMessageId].filter((id): id is string => id !== null);
  if (ids.length > 0) await memory.deleteMessages(ids);
}

/** The columns that tied a turn to an attempt that is gone. */
export const noAttempt = { userMessageId: null, assistantMessageId: null, partialText: '', error: null };
