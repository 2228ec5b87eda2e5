import { QUEUE_CAPACITY } from '@chat/contracts';
import type { Queryable, ThreadRow, TurnRow } from '@chat/db';
import { ApiError } from '../../../platform/errors';
import { readQueueRows } from './repository';

/** What admission reads of a thread: its active turn and its waiting ones. */
export interface AdmissionReads {
  active: TurnRow | undefined;
  waiting: TurnRow[];
}

/**
 * The reads of `admitSend`, by the thread's id alone: they go out with the statement that locks the
 * thread (statements of a transaction run in order, so they read once the lock is held).
 */
export async function readAdmission(tx: Queryable, threadId: string): Promise<AdmissionReads> {
  // The queue's one statement (its active turn and its waiting ones, in order).
  const { active, waiting } = await readQueueRows(tx, threadId);
  return { active, waiting };
}

/**
 * Q2-Q4: how a send joins the thread, under its lock. Idle (nothing active, nothing waiting, the
 * queue not paused): it runs at once. Otherwise it waits in the queue, which holds at most
 * QUEUE_CAPACITY items; a send past that is refused with `queue_full` before anything is written.
 */
export function admitSend(
  thread: ThreadRow,
  { active, waiting }: AdmissionReads,
): { idle: boolean; active: TurnRow | undefined } {
  // A paused queue claims nothing: the send waits in the queue like any other (Q6).
  const idle = !active && waiting.length === 0 && !thread.queuePaused;
  if (!idle && waiting.length >= QUEUE_CAPACITY) throw new ApiError('queue_full');
  return { idle, active };
}
