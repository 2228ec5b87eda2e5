import { inStatusGroup, type Turn } from '@chat/contracts';
import type { Database } from '@chat/db';
import type { Memory } from '@mastra/memory';
import { commitOrSayUnsure } from '../../../platform/commitOutcome';
import { ApiError, notEligible, notFound } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import { activeBranchIdOf, requireOwnedThread } from '../../threads/repository';
import { toTurn } from '../dto';
import { removeFailedAttempt } from '../queue/failedAttempt';
import { resumeOnExplicitRun } from '../queue/pause';
import { listWaitingTurns } from '../queue/repository';
import { findActiveTurn, findTurn } from '../repository';
import type { TurnRunner } from './runner';
import type { TurnStream } from './turnStream';

export interface HeadClaimDeps {
  db: Database;
  memory: Memory;
  signals: Signals;
  runner: TurnRunner;
  logger: Logger;
}

/**
 * Claiming the queue head (Q9-Q11): a viewer's claim, Send now, and Retry of a failed head. Under
 * the thread lock, so racing claims from any tab or instance serialise; the partial unique index
 * on active turns is the last line of defence for Q5.
 */
export class HeadClaims {
  constructor(private readonly deps: HeadClaimDeps) {}

  /**
   * Q10: a viewer claims the queue head when the thread is idle and the queue is not paused
   * (`turnId`: only if it is the head; Send now, Stop & send and Retry name the head, explicit
   * choices to go on, so they run it and end a pause: S3). Q11: a failed head blocks every claim
   * except a retry of it, which first removes the failed attempt from memory. The head runs on
   * the version shown now (B2).
   */
  async claim(
    ownerId: string,
    threadId: string,
    options: { turnId?: string; retry?: boolean } = {},
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    const { db, runner } = this.deps;
    const { turn, branch, retried } = await commitOrSayUnsure(db, async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      if (thread.queuePaused && !options.turnId) throw notEligible('queue_paused');
      const active = await findActiveTurn(tx, threadId);
      // Q12: a pending approval blocks the queue until a person decides (or stops the turn).
      if (active?.status === 'awaiting_approval') throw notEligible('hitl_pending');
      if (active) throw notEligible('turn_active');
      const [head] = await listWaitingTurns(tx, threadId);
      if (!head) throw notEligible('queue_empty');
      if (options.turnId && head.id !== options.turnId) throw new ApiError('not_queue_head');
      if (head.status === 'failed') {
        if (!options.retry) throw notEligible('head_failed');
        await removeFailedAttempt(this.deps.memory, head);
      }
      if (options.turnId) await resumeOnExplicitRun(tx, thread);
      // The branch is read here, so nothing after the commit needs the database to start the run.
      const branchId = activeBranchIdOf(thread);
      const [turn, branch] = await Promise.all([runner.claim(tx, head, branchId), findBranch(tx, branchId)]);
      return { turn, branch, retried: head.status === 'failed' };
    });
    // E5: the commit claimed the head; nothing after it may turn the answer into a refusal (a
    // claim has no idempotency key: a retry would meet the turn it started). Other tabs drop the
    // failed attempt from their transcript before they follow the new run; they also find it by
    // reading, so the announcement is best-effort.
    if (retried) {
      await this.deps.signals
        .publish({ kind: 'thread.changed', threadId })
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error, turnId: turn.id }, 'could not announce a retry'),
        );
    }
    return { turn: toTurn(turn), stream: await runner.start(turn, ownerId, branch) };
  }

  /**
   * Q11: Retry on a failed head runs the same text again at once, in place of the failed attempt.
   * A head that is merely queued (another tab edited it meanwhile) runs at once too, like Send now.
   */
  async retry(
    ownerId: string,
    threadId: string,
    turnId: string,
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    const turn = await findTurn(this.deps.db, threadId, turnId);
    if (!turn) throw notFound('turn');
    if (!inStatusGroup('editable', turn.status)) throw new ApiError('not_queued');
    return await this.claim(ownerId, threadId, { turnId, retry: true });
  }
}
