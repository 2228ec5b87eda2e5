import { characterCount, hasVisibleText, MAX_TEXT_LENGTH, refusalMessages } from '@chat/contracts';
import type { Queryable } from '@chat/db';
import { ApiError, threadBusy } from '../../platform/errors';
import { findActiveTurn, listQueuedTurns } from './repository';

/** The checks a send or a change of versions passes before anything is written. */

/**
 * Checks message text (1 to 32,000 characters after trimming, counted as code points so 32,000 emoji
 * pass like 32,000 letters, some of them visible: a zero-width space alone is empty) and returns it trimmed.
 */
export function validMessageText(text: string): string {
  const trimmed = text.trim();
  if (!hasVisibleText(trimmed)) throw new ApiError('bad_request', refusalMessages.bad_request.emptyText);
  if (characterCount(trimmed) > MAX_TEXT_LENGTH) {
    throw new ApiError('too_large', refusalMessages.too_large.text);
  }
  return trimmed;
}

/**
 * B2, B4: switching the shown version and deleting the latest turn wait only for the running turn;
 * queued turns belong to the thread and run on the version shown when they are claimed.
 */
export async function assertNoRunningTurn(q: Queryable, threadId: string): Promise<void> {
  const active = await findActiveTurn(q, threadId);
  if (active?.status === 'awaiting_approval') throw threadBusy('approval_pending');
  if (active) throw threadBusy('turn_running');
}

/**
 * B1: editing a message into a new version waits until the thread is quiet (nothing running,
 * nothing queued): the edit's reply runs at once, and must not overtake messages already waiting.
 */
export async function assertIdle(q: Queryable, threadId: string): Promise<void> {
  await assertNoRunningTurn(q, threadId);
  if ((await listQueuedTurns(q, threadId)).length > 0) {
    throw threadBusy('queue_waiting');
  }
}
