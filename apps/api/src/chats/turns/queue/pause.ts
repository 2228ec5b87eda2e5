import type { Queryable, ThreadRow, TurnRow } from '@chat/db';
import { setQueuePaused } from '../../threads/repository';
import { listWaitingTurns } from './repository';

/**
 * The queue's pause, as Stop, the explicit choices to go on and the last delete set it (S3); the Dock's own Pause
 * and Resume set it directly (QueueService.setPaused). Under the thread lock.
 */

/**
 * Stop with items waiting pauses the queue: people press Stop because they changed their mind.
 * The items are kept (never cancelled). Returns whether the queue is paused now. `waiting`: the
 * queue as read under the lock already (read here otherwise).
 */
export async function pauseIfItemsWait(
  tx: Queryable,
  thread: ThreadRow,
  waiting?: readonly TurnRow[],
): Promise<boolean> {
  if ((waiting ?? (await listWaitingTurns(tx, thread.id))).length === 0) return thread.queuePaused;
  if (!thread.queuePaused) await setQueuePaused(tx, thread.id, true);
  return true;
}

/** Send now, Stop & send and Retry on the head are explicit choices to go on: the pause ends. */
export async function resumeOnExplicitRun(tx: Queryable, thread: ThreadRow): Promise<void> {
  if (thread.queuePaused) await setQueuePaused(tx, thread.id, false);
}

/**
 * A pause holds the items that wait. Once the last of them is deleted it holds nothing, and a
 * pause that stayed would hold the next message instead of running it ("paused 0 / 5"): it ends.
 * A pause asked for on an empty queue (`PUT /queue/paused`) is kept: holding the next sends is
 * what it was asked for, and nothing left the queue.
 */
export async function endPauseOnceEmpty(tx: Queryable, thread: ThreadRow): Promise<void> {
  if (!thread.queuePaused) return;
  if ((await listWaitingTurns(tx, thread.id)).length > 0) return;
  await setQueuePaused(tx, thread.id, false);
}
