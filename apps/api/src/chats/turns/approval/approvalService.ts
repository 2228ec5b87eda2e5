import { type HitlDecision, refusalMessages, type Turn } from '@chat/contracts';
import type { Database } from '@chat/db';
import { commitOrSayUnsure } from '../../../platform/commitOutcome';
import { ApiError, InvariantError, notFound } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import { requireOwnedThread } from '../../threads/repository';
import { toTurn } from '../dto';
import { findTurn } from '../repository';
import type { TurnRunner } from '../running/runner';
import type { TurnStream } from '../running/turnStream';
import { decideRequest, findRequest } from './repository';

/** Deciding a tool approval (H3): approve runs the tool, deny tells the model; the turn continues. */
export class ApprovalService {
  constructor(
    private readonly deps: { db: Database; signals: Signals; runner: TurnRunner; logger: Logger },
  ) {}

  /**
   * Under the thread lock: the request must be this thread's (else `404`) and still pending (else
   * `409 already_decided`). It records the decision and takes the waiting turn back to `running` on
   * this instance, which resumes Mastra's suspended run and answers with the continuing reply.
   */
  async decide(
    ownerId: string,
    threadId: string,
    requestId: string,
    decision: HitlDecision,
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    const { db, runner } = this.deps;
    const { turn, request, branch } = await commitOrSayUnsure(db, async (tx) => {
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const pending = await findRequest(tx, threadId, requestId);
      if (!pending) throw notFound('approval');
      if (pending.status !== 'pending') {
        throw new ApiError('already_decided', refusalMessages.already_decided.as(pending.status), {
          status: pending.status,
        });
      }
      const waiting = await findTurn(tx, threadId, pending.turnId);
      if (waiting?.status !== 'awaiting_approval') {
        throw new InvariantError(`approval ${pending.id} is pending but its turn is ${waiting?.status}`);
      }
      const request = await decideRequest(tx, pending.id, decision === 'approve' ? 'approved' : 'denied');
      if (!request) throw new InvariantError(`approval ${pending.id} changed under the thread lock`);
      // Read here, so nothing after the commit needs the database to answer.
      const branch = await findBranch(tx, waiting.branchId);
      return { turn: await runner.claimResumed(tx, waiting), request, branch };
    });
    // E5: the commit decided; nothing after it may turn the answer into a refusal. Started before
    // other tabs hear of the decision, so they attach to the live stream; the announcement is
    // best-effort (tabs also read the decision on their next refetch).
    const stream = await runner.resume(turn, ownerId, request, decision, branch);
    await this.deps.signals
      .publish({ kind: 'hitl.changed', threadId })
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, turnId: turn.id }, 'could not announce a decision'),
      );
    return { turn: toTurn(turn), stream };
  }
}
