import type { Database, Queryable, ThreadRow, TurnRow } from '@chat/db';
import { writeUserMessageLineage } from '../../../agent/memoryTables';
import type { Signals } from '../../../platform/notifications';
import { lockThread } from '../../threads/repository';
import { transitionTurn } from '../lifecycle';
import { findTurn } from '../repository';
import { listSteersDeliveredInto, requeueSteers } from '../steer/repository';
import type { Outcome, RunProgress } from './replyRepair';

/** How a running turn ends. */
export interface Settlement {
  status: 'completed' | 'interrupted' | 'failed';
  error: string | null;
  /** The reply as stored in memory (null when there is none). */
  assistantMessageId: string | null;
  /** The final visible reply text, when the settler has a fresher one than the last checkpoint. */
  partialText?: string;
  /** The runtime driver's newest resume token, kept with the final reply (failed turns too). */
  resumeToken?: string | null;
}

/**
 * The one way a running turn ends, for its runner and for crash recovery alike. Under the thread
 * lock (so concurrent settlers run one after the other), `current` re-reads the turn and returns it
 * only if it is still this settler's to end; `decide` then says how it ends (and may repair memory
 * first). The turn leaves `running`, which frees the thread's active slot, and once committed every
 * instance hears `turn.settled`. Returns null when there was nothing (left) to settle.
 */
export async function settleTurn(
  deps: { db: Database; signals: Signals },
  threadId: string,
  current: (tx: Queryable) => Promise<TurnRow | undefined>,
  decide: (tx: Queryable, turn: TurnRow, thread: ThreadRow) => Promise<Settlement>,
): Promise<TurnRow | null> {
  const settled = await deps.db.transaction(async (tx) => {
    const thread = await lockThread(tx, threadId);
    const turn = thread ? await current(tx) : undefined;
    if (!thread || !turn) return null;
    const { status, ...changes } = await decide(tx, turn, thread);
    // Steers no run took in go to the head of the queue as the turn ends (the reference's
    // steer-undelivered), in this transaction: none is ever left pending without an active turn.
    await requeueSteers(tx, threadId);
    // Its user message is stored by now: the lineage row that versions are found by. So are the
    // steers it took in (user messages of their own).
    if (turn.userMessageId) await writeUserMessageLineage(tx, turn.branchId, turn.userMessageId);
    for (const steer of await listSteersDeliveredInto(tx, turn)) {
      if (steer.userMessageId) await writeUserMessageLineage(tx, turn.branchId, steer.userMessageId);
    }
    return await transitionTurn(tx, turn, status, {
      ...changes,
      finishedAt: new Date(),
      leaseExpiresAt: null,
    });
  });
  if (settled) {
    await deps.signals.publish({ kind: 'turn.settled', threadId: settled.threadId, turnId: settled.id });
  }
  return settled;
}

/**
 * Settles a turn its runner (`runnerId`) ran to an end; a turn waiting for an approval is left
 * running. Recovery may have settled it already if the instance stalled past its lease.
 */
export async function settleRun(
  deps: { db: Database; signals: Signals; runnerId: string },
  turn: TurnRow,
  progress: RunProgress,
  outcome: Outcome,
  resumeToken: string | null,
): Promise<void> {
  if (outcome.status === 'awaiting_approval') return;
  await settleTurn(
    deps,
    turn.threadId,
    async (tx) => {
      const current = await findTurn(tx, turn.threadId, turn.id);
      return current?.status === 'running' && current.runnerId === deps.runnerId ? current : undefined;
    },
    async () => ({
      status: outcome.status,
      partialText: progress.partialText,
      assistantMessageId: progress.assistantMessageId,
      resumeToken,
      error: outcome.status === 'failed' ? outcome.error : null,
    }),
  );
}
