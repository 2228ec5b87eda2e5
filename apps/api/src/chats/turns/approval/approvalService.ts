import { type HitlDecision, refusalMessages, type ToolMode, type Turn } from '@chat/contracts';
import type { Database } from '@chat/db';
import { commitOrSayUnsure } from '../../../platform/commitOutcome';
import { ApiError, InvariantError, notFound } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import { requireOwnedThread, setToolModes } from '../../threads/repository';
import { toTurn } from '../dto';
import { findTurn } from '../repository';
import type { TurnRunner } from '../running/runner';
import type { TurnStream } from '../stream/turnStream';
import { decideRequest, findRequest, listPendingRequests } from './repository';

/** Deciding a tool approval (H3): approve runs the tool, deny tells the model; the turn continues. */
export class ApprovalService {
  constructor(
    private readonly deps: { db: Database; signals: Signals; runner: TurnRunner; logger: Logger },
  ) {}

  /**
   * Under the thread lock: the request must be this thread's (else `404`) and still pending (else
   * `409 already_decided`). It records the decision and takes the waiting turn back to `running` on
   * this instance, which resumes Mastra's suspended run and answers with the continuing reply.
   * `allowForChat` (T1, with approve): the chat allows this tool from now on, in the same commit.
   */
  async decide(
    ownerId: string,
    threadId: string,
    requestId: string,
    decision: HitlDecision,
    options: { allowForChat?: boolean } = {},
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    const { db, runner } = this.deps;
    const allowForChat = options.allowForChat === true && decision === 'approve';
    const { turn, request, branch } = await commitOrSayUnsure(db, async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
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
      if (allowForChat) {
        await setToolModes(tx, threadId, { ...thread.toolModes, [pending.toolName]: 'allow' });
      }
      // Read here, so nothing after the commit needs the database to answer.
      const branch = await findBranch(tx, waiting.branchId);
      return { turn: await runner.claimResumed(tx, waiting), request, branch };
    });
    // E5: the commit decided; nothing after it may turn the answer into a refusal. Started before
    // other tabs hear of the decision, so they attach to the live stream; the announcement is
    // best-effort (tabs also read the decision on their next refetch).
    const stream = await runner.resume(turn, ownerId, request, decision, branch);
    const announced = Promise.all([
      this.deps.signals.publish({ kind: 'hitl.changed', threadId }),
      ...(allowForChat ? [this.deps.signals.publish({ kind: 'thread.changed', threadId })] : []),
    ]);
    await announced.catch((error: unknown) =>
      this.deps.logger.warn({ err: error, turnId: turn.id }, 'could not announce a decision'),
    );
    return { turn: toTurn(turn), stream };
  }

  /**
   * A chat's tool settings changed (T2): a pending approval of a tool now `allow` is approved, one
   * of a tool now `off` is denied; the resumed reply runs on this instance like any decided one
   * (tabs attach to it on the decision's event). One decided meanwhile by a person is left alone;
   * one that cannot be decided now stays pending (best effort after the change is stored).
   */
  async followToolSettings(
    ownerId: string,
    threadId: string,
    modes: Record<string, ToolMode>,
  ): Promise<void> {
    for (const request of await listPendingRequests(this.deps.db, threadId)) {
      const mode = modes[request.toolName];
      const decision = mode === 'allow' ? 'approve' : mode === 'off' ? 'deny' : undefined;
      if (!decision) continue;
      try {
        await this.decide(ownerId, threadId, request.id, decision);
      } catch (error) {
        // Decided (or stopped) meanwhile: nothing to follow. Anything else leaves the request for
        // a person; the settings change itself is stored either way.
        if (error instanceof ApiError && (error.code === 'already_decided' || error.code === 'not_found'))
          continue;
        this.deps.logger.warn(
          { err: error, threadId },
          'could not decide an approval after a settings change',
        );
      }
    }
  }
}
