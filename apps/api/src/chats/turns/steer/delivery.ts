import type { Database, TurnRow } from '@chat/db';
import type { Signals } from '../../../platform/notifications';
import type { RuntimeConnection, SteerMessage } from '../driver/types';
import { listPendingSteers, markSteersDelivered, requeueSteers } from './repository';

/**
 * The running reply took these steers in at a step boundary: their rows become `delivered` (their
 * user messages recorded on the running turn's branch), and every tab hears the queue changed.
 */
export async function recordSteersDelivered(
  deps: { db: Database; signals: Signals },
  turn: TurnRow,
  steers: SteerMessage[],
): Promise<void> {
  await deps.db.transaction((tx) => markSteersDelivered(tx, turn.threadId, turn.branchId, steers));
  await deps.signals.publish({ kind: 'queue.changed', threadId: turn.threadId });
}

/** The reference's `steer-undelivered`: steers the run never took in go to the head of the queue. */
export async function requeueUndeliveredSteers(
  deps: { db: Database; signals: Signals },
  threadId: string,
  steers: SteerMessage[],
): Promise<void> {
  const ids = steers.map((steer) => steer.turnId);
  const requeued = await deps.db.transaction((tx) => requeueSteers(tx, threadId, ids));
  if (requeued.length > 0) await deps.signals.publish({ kind: 'queue.changed', threadId });
}

/**
 * Hands the thread's pending steers to its run (the driver delivers them at the next step boundary
 * and ignores ones it already has). A driver that cannot steer gets none: they are queued at the
 * head at once, and run with the steer reminder.
 */
export async function redirectPendingSteers(
  deps: { db: Database; signals: Signals },
  threadId: string,
  connection: RuntimeConnection,
): Promise<void> {
  const steers = (await listPendingSteers(deps.db, threadId)).map((row) => ({
    turnId: row.id,
    messageId: crypto.randomUUID(),
    text: row.text,
  }));
  if (steers.length === 0) return;
  if (connection.redirect) connection.redirect(steers);
  else await requeueUndeliveredSteers(deps, threadId, steers);
}
