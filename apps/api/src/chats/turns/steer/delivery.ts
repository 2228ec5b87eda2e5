import type { Database, TurnRow } from '@chat/db';
import type { Signals } from '../../../platform/notifications';
import { lockThread } from '../../threads/repository';
import type { SteerMessage } from '../driver/types';
import { findTurn } from '../repository';
import {
  listPendingSteers,
  listSteersAtBoundary,
  markSteerDelivered,
  requeueSteers,
  steerMessageOf,
} from './repository';

/**
 * Steer delivery, the one place a steer becomes part of a running reply. A run that can steer
 * asks at each step boundary (DriverTurn.takeSteers): under the thread lock, and only while its
 * turn still runs on this runner, the thread's pending steers become `delivered` (their user
 * messages recorded on the running turn's branch) and are handed over with their text as it
 * stands now. Editing or deleting a pending steer in the Dock takes the same lock, so it either
 * comes first (and the run takes the edited text, or nothing) or finds the steer delivered.
 *
 * `heard`: the steers this run was handed. A boundary whose commit went through while its answer
 * was lost (the database went away as it committed) left steers delivered that the run never got;
 * the next boundary hands them over, first, under the ids the database gave them, so they are
 * answered rather than only kept after the reply.
 */
export async function takeSteersAtBoundary(
  deps: { db: Database; runnerId: string },
  turn: TurnRow,
  heard: ReadonlySet<string>,
): Promise<SteerMessage[]> {
  // Most boundaries have nothing to take: one indexed read, no lock.
  const seen = await listSteersAtBoundary(deps.db, turn);
  const unheard = seen.flatMap((steer) => {
    const message = steer.status === 'delivered' && !heard.has(steer.id) ? steerMessageOf(steer) : undefined;
    return message ? [message] : [];
  });
  if (!seen.some((steer) => steer.status === 'steer_pending')) return unheard;
  return await deps.db.transaction(async (tx) => {
    if (!(await lockThread(tx, turn.threadId))) return unheard;
    const current = await findTurn(tx, turn.threadId, turn.id);
    // Stopped or settled meanwhile: the steers wait for the queue (settling requeues them).
    if (current?.status !== 'running' || current.runnerId !== deps.runnerId) return unheard;
    const steers: SteerMessage[] = [...unheard];
    for (const pending of await listPendingSteers(tx, turn.threadId)) {
      const messageId = crypto.randomUUID();
      await markSteerDelivered(tx, pending, turn.branchId, messageId);
      steers.push({ turnId: pending.id, messageId, text: pending.text });
    }
    return steers;
  });
}

/**
 * Steers sent while the running reply cannot take them in (its driver cannot steer) go to the
 * head of the queue at once, and run next with the steer reminder.
 */
export async function requeuePendingSteers(
  deps: { db: Database; signals: Signals },
  threadId: string,
): Promise<void> {
  const requeued = await deps.db.transaction(async (tx) => {
    if (!(await lockThread(tx, threadId))) return [];
    return await requeueSteers(tx, threadId);
  });
  if (requeued.length > 0) await deps.signals.publish({ kind: 'queue.changed', threadId });
}
