import type { Database } from '@chat/db';
import type { Logger } from '../../../platform/logger';
import type { RunProgress } from './replyRepair';
import { checkpointRunningTurn } from './repository';

/**
 * One heartbeat of a running turn: renews its lease and checkpoints the visible reply. A lost lease
 * aborts the run. `failing` holds the turns whose last checkpoint failed, so a database outage is
 * logged once per turn (and its recovery once), not every heartbeat.
 */
export async function checkpoint(
  deps: { db: Database; runnerId: string; leaseMs: number; logger: Logger },
  failing: Set<string>,
  turnId: string,
  progress: RunProgress,
  controller: AbortController,
): Promise<void> {
  try {
    const stillOurs = await checkpointRunningTurn(deps.db, turnId, deps.runnerId, deps.leaseMs, progress);
    if (!stillOurs) controller.abort(new Error('lease lost'));
    if (failing.delete(turnId)) deps.logger.info({ turnId }, 'turn checkpoints work again');
  } catch (error) {
    if (!failing.has(turnId)) deps.logger.warn({ err: error, turnId }, 'turn checkpoint failed');
    failing.add(turnId);
  }
}
