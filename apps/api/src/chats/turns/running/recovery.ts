import { turnErrorMessages } from '@chat/contracts';
import type { Database, TurnRow } from '@chat/db';
import type { Memory } from '@mastra/memory';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import { ensureReplyPersisted } from '../../branches/transcript';
import { findOrphanedTurn, listOrphanedTurns } from './repository';
import { settleTurn } from './settle';

export interface RecoveryDeps {
  db: Database;
  memory: Memory;
  signals: Signals;
  logger: Logger;
}

/**
 * Settles a running turn whose runner died (its lease ran out): the reply text checkpointed so far
 * goes into memory, the turn becomes `interrupted`, the thread's active slot is released. Queued
 * turns are not touched. Safe to call from any instance, any number of times: only the first
 * settler (under the thread lock) writes the reply.
 */
export async function settleOrphanedTurn(deps: RecoveryDeps, orphan: TurnRow): Promise<TurnRow | null> {
  const settled = await settleTurn(
    deps,
    orphan.threadId,
    (tx) => findOrphanedTurn(tx, orphan.id),
    async (tx, turn, thread) => {
      const branch = await findBranch(tx, turn.branchId);
      let replyId = turn.assistantMessageId;
      if (branch && turn.userMessageId) {
        replyId = await ensureReplyPersisted(deps.memory, {
          memoryThreadId: branch.memoryThreadId,
          resourceId: thread.ownerId,
          userMessage: {
            id: turn.userMessageId,
            text: turn.text,
            createdAt: turn.startedAt ?? turn.createdAt,
            attachments: turn.attachments,
          },
          assistantText: turn.partialText,
        });
      }
      return {
        status: 'interrupted',
        assistantMessageId: replyId,
        // The reply is in memory now; its checkpoint copy goes.
        partialText: '',
        error: turnErrorMessages.serverStopped,
      };
    },
  );
  if (settled)
    deps.logger.warn({ turnId: settled.id, threadId: settled.threadId }, 'settled an orphaned turn');
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

/** The longest pause between sweeps while they keep failing (the database is down). */
const MAX_BACKOFF_MS = 15_000;

/**
 * Sweeps for orphaned turns now and then every `intervalMs`; returns a stop function. A sweep that
 * fails (the database is down) is logged and the next one waits longer, doubling up to 15 s, and
 * back to `intervalMs` after one succeeds. It never throws: a background task must not stop the
 * process.
 */
export function startOrphanSweeper(deps: RecoveryDeps, intervalMs: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;
  const sweep = async () => {
    try {
      await settleOrphanedTurns(deps);
      if (failures > 0) deps.logger.info({ failures }, 'orphan sweeps work again');
      failures = 0;
    } catch (error) {
      failures += 1;
      if (failures === 1) deps.logger.warn({ err: error }, 'orphan sweep failed; backing off');
    }
    if (stopped) return;
    const delay =
      failures === 0
        ? intervalMs
        : Math.min(Math.max(intervalMs, MAX_BACKOFF_MS), intervalMs * 2 ** failures);
    timer = setTimeout(() => void sweep(), delay);
    timer.unref();
  };
  void sweep();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
