import { QUEUE_CAPACITY } from '@chat/contracts';
import type { Queryable, ThreadRow, TurnRow } from '@chat/db';
import { ApiError } from '../../../platform/errors';
import { findActiveTurn } from '../repository';
import { listWaitingTurns } from './repository';

/**
 * Q2-Q4: how a send joins the thread, under its lock. Idle (nothing active, nothing waiting, the
 * queue not paused): it runs at once. Otherwise it waits in the queue, which holds at most
 * QUEUE_CAPACITY items; a send past that is refused with `queue_full` before anything is written.
 */
export async function admitSend(
  tx: Queryable,
  thread: ThreadRow,
): Promise<{ idle: boolean; active: TurnRow | undefined }> {
  const [active, waiting] = await Promise.all([
    findActiveTurn(tx, thread.id),
    listWaitingTurns(tx, thread.id),
  ]);
  // A paused queue claims nothing: the send waits in the queue like any other (Q6).
  const idle = !active && waiting.length === 0 && !thread.queuePaused;
  if (!idle && waiting.length >= QUEUE_CAPACITY) throw new ApiError('queue_full');
  return { idle, active };
}
