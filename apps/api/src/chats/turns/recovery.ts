import type { Database, TurnRow } from '@chat/db';
import type { ChatAgent } from '../../agent/chatAgent';
import type { Logger } from '../../platform/logger';
import type { Signals } from '../../platform/notifications';
import { findBranch, lockThread } from '../threads/repository';
import { ensureReplyPersisted } from '../transcript';
import { findOrphanedTurn, listOrphanedTurns, transitionTurn } from './repository';

export interface RecoveryDeps {
  db: Database;
  chatAgent: ChatAgent;
  signals: Signals;
  logger: Logger;
}

/**
 * Settles a running turn whose runner died (its lease ran out): the reply text checkpointed so far
 * goes into memory, the turn becomes `interrupted`, the thread's active slot is released. Queued
 * turns are not touched. Safe to call from any instance, any number of times.
 */
export async function settleOrphanedTurn(deps: RecoveryDeps, orphan: TurnRow): Promise<TurnRow | null> {
  const settled = await deps.db.transaction(async (tx) => {
    // Under the thread lock, so concurrent settlers (two sweepers, a sweeper and an interrupt)
    // run one after the other and only the first writes the reply.
    const thread = await lockThread(tx, orphan.threadId);
    const current = await findOrphanedTurn(tx, orphan.id);
    if (!thread || !current) return null;
    const branch = await findBranch(tx, current.branchId);
    let replyId = current.assistantMessageId;
    if (branch && current.userMessageId) {
      replyId = await ensureReplyPersisted(deps.chatAgent.memory, {
        memoryThreadId: branch.memoryThreadId,
        resourceId: thread.ownerId,
        userMessage: {
          id: current.userMessageId,
          text: current.text,
          createdAt: current.startedAt ?? current.createdAt,
        },
        assistantText: current.partialText,
      });
    }
    return await transitionTurn(tx, current, 'interrupted', {
      finishedAt: new Date(),
      leaseExpiresAt: null,
      assistantMessageId: replyId,
      error: 'The server running this turn stopped; the reply was cut off.',
    });
  });
  if (settled) {
    deps.logger.warn({ turnId: settled.id, threadId: settled.threadId }, 'settled an orphaned turn');
    await deps.signals.publish({ kind: 'turn.settled', threadId: settled.threadId, turnId: settled.id });
  }
  return settled;
}

export async function settleOrphanedTurns(deps: RecoveryDeps): Promise<number> {
  let count = 0;
  for (const orphan of await listOrphanedTurns(deps.db)) {
    try {
      if (await settleOrphanedTurn(deps, orphan)) count += 1;
    } catch (error) {
      deps.logger.error({ err: error, turnId: orphan.id }, 'could not settle an orphaned turn');
    }
  }
  return count;
}

/** Sweeps for orphaned turns now and then every `intervalMs`; returns a stop function. */
export function startOrphanSweeper(deps: RecoveryDeps, intervalMs: number): () => void {
  let sweeping: Promise<unknown> = settleOrphanedTurns(deps);
  const timer = setInterval(() => {
    sweeping = sweeping.then(() => settleOrphanedTurns(deps));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
