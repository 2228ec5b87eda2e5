import type { Queryable } from '@chat/db';
import { threadBusy } from '../../../platform/errors';
import { findActiveTurn } from '../repository';
import { listWaitingTurns } from './repository';

/**
 * B2, B4: switching the shown version and deleting the latest turn wait only for the active turn;
 * waiting items belong to the thread and run on the version shown when they are claimed.
 */
export async function assertNoActiveTurn(q: Queryable, threadId: string): Promise<void> {
  const active = await findActiveTurn(q, threadId);
  if (active?.status === 'awaiting_approval') throw threadBusy('approval_pending');
  if (active) throw threadBusy('turn_running');
}

/**
 * B1: editing a message into a new version waits until the thread is quiet (nothing active,
 * nothing waiting): the edit's reply runs at once, and must not overtake messages already waiting.
 */
export async function assertQuiet(q: Queryable, threadId: string): Promise<void> {
  await assertNoActiveTurn(q, threadId);
  if ((await listWaitingTurns(q, threadId)).length > 0) throw threadBusy('queue_waiting');
}
