import { inStatusGroup, type Turn } from '@chat/contracts';
import type { BranchRow, Database, Queryable, ThreadRow, TurnRow } from '@chat/db';
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
import type { TurnStream } from '../stream/turnStream';

/** A head claimed in a transaction, to start once it committed. */
interface Claimed {
  turn: TurnRow;
  branch: BranchRow | undefined;
  retried: boolean;
}

/**
 * What a head claim needs of the runner (running/runner.ts, which is given by the wiring): taking
 * the thread's active slot inside the claim's transaction, then starting the turn once it
 * committed. Named here so the claim lifecycle never imports the running one above it.
 */
export interface TurnStarter {
  claim(tx: Queryable, turn: TurnRow, branchId: string): Promise<TurnRow>;
  start(turn: TurnRow, ownerId: string, branch?: BranchRow): Promise<TurnStream>;
}

export interface HeadClaimDeps {
  db: Database;
  signals: Signals;
  runner: TurnStarter;
  logger: Logger;
}

/**
 * Claiming the queue head (Q9-Q11, Q15): a viewer's claim, Send now, Retry of a failed head, and
 * the server's own claim for a chat that drains in the background, all by one rule. Under
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
    const claimed = await commitOrSayUnsure(this.deps.db, async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      return await this.claimLocked(tx, thread, options);
    });
    return await this.started(ownerId, claimed);
  }

  /**
   * Q15: the server's own claim for a chat whose queue runs with no page open. `pick` finds and
   * locks a thread the drain may run (or none); the head is then claimed by exactly the rules of
   * a viewer's claim (`claimLocked`), in the same transaction, so a refusal changes nothing. Null
   * when `pick` found nothing; a refusal throws like a viewer's claim.
   */
  async claimUnattended(
    pick: (tx: Queryable) => Promise<ThreadRow | undefined>,
  ): Promise<{ turn: Turn; stream: TurnStream } | null> {
    const claimed = await this.deps.db.transaction(async (tx) => {
      const thread = await pick(tx);
      return thread ? { ...(await this.claimLocked(tx, thread, {})), ownerId: thread.ownerId } : null;
    });
    return claimed ? await this.started(claimed.ownerId, claimed) : null;
  }

  /**
   * The one rule of claiming the head, under the thread lock the caller holds (Q9-Q12, S3, the
   * per-account running cap and the handoff in `runner.claim`).
   */
  private async claimLocked(
    tx: Queryable,
    thread: ThreadRow,
    options: { turnId?: string; retry?: boolean },
  ): Promise<Claimed> {
    const threadId = thread.id;
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
      await removeFailedAttempt(tx, head);
    }
    if (options.turnId) await resumeOnExplicitRun(tx, thread);
    // The branch is read here, so nothing after the commit needs the database to start the run.
    const branchId = activeBranchIdOf(thread);
    const [turn, branch] = await Promise.all([
      this.deps.runner.claim(tx, head, branchId),
      findBranch(tx, branchId),
    ]);
    return { turn, branch, retried: head.status === 'failed' };
  }

  /** Starts a claimed head once its claim committed. */
  private async started(ownerId: string, claimed: Claimed): Promise<{ turn: Turn; stream: TurnStream }> {
    const { turn, branch, retried } = claimed;
    const { threadId } = turn;
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
    return { turn: toTurn(turn), stream: await this.deps.runner.start(turn, ownerId, branch) };
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
