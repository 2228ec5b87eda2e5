import type { Queryable, ThreadRow } from '@chat/db';
import { setQueuePaused } from '../../threads/repository';
import { listWaitingTurns } from './repository';

/**
 * The queue's pause, as Stop and the explicit choices to go on set it (S3); the Dock's own Pause
 * and Resume set it directly (QueueService.setPaused). Under the thread lock.
 */

/**
 * Stop with items waiting pauses the queue: people press Stop because they changed their mind.
 * The items are kept (never cancelled). Returns whether the queue is paused now.
 */
export async function pauseIfItemsWait(tx: Queryable, thread: ThreadRow): Promise<boolean> {
  if ((await listWaitingTurns(tx, thread.id)).length === 0) return thread.queuePaused;
  if (!thread.queuePaused) await setQueuePaused(tx, thread.id, true);
  return true;
}

/** Send now, Stop & send and Retry on the head are explicit choices to go on: the pause ends. */
export async function resumeOnExplicitRun(tx: Queryable, thread: ThreadRow): Promise<void> {
  if (thread.queuePaused) await setQueuePaused(tx, thread.id, false);
}
