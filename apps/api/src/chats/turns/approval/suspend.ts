import type { Database, HitlRequestRow, TurnRow } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { TOOL_CANCELLED_REASON } from '../../../agent/tools';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import { closeToolCall } from '../../branches/transcript';
import { lockThread } from '../../threads/repository';
import type { TranscriptStore } from '../../transcript/transcriptStore';
import type { RuntimeDriver, SuspendedCall } from '../driver/types';
import { transitionTurn } from '../lifecycle';
import type { ReplyRecord } from '../replyRecord';
import { findTurn } from '../repository';
import { settleTurn } from '../settle/settle';
import { requeueSteers } from '../steer/repository';
import { endOfReply, type TurnStream } from '../stream/turnStream';
import { decideRequest, findPendingRequestOfTurn, insertPendingRequest } from './repository';

/**
 * A run suspended for a tool approval (H3): under the thread lock, the turn moves from `running`
 * to `awaiting_approval`, gives up its runner and lease (nobody is producing it; the sweeper leaves
 * it alone) but keeps the thread's active slot, and the request is recorded as `pending`. Returns
 * null when the turn is no longer this runner's (it was settled meanwhile).
 */
export async function suspendForApproval(
  deps: { db: Database; signals: Signals; logger: Logger },
  turn: TurnRow,
  runnerId: string,
  reply: ReplyRecord,
  call: SuspendedCall,
): Promise<HitlRequestRow | null> {
  const request = await deps.db.transaction(async (tx) => {
    if (!(await lockThread(tx, turn.threadId))) return null;
    const current = await findTurn(tx, turn.threadId, turn.id);
    if (current?.status !== 'running' || current.runnerId !== runnerId) return null;
    // Nothing runs while it waits: steers sent into this run go to the head of the queue.
    await requeueSteers(tx, turn.threadId);
    await transitionTurn(tx, current, 'awaiting_approval', {
      runnerId: null,
      leaseExpiresAt: null,
      // The reply so far (stored in memory by the runner first) is what the continued run goes on from.
      partialText: reply.currentText,
      partialParts: reply.snapshot(),
      assistantMessageId: reply.currentId,
    });
    return await insertPendingRequest(tx, {
      id: crypto.randomUUID(),
      threadId: turn.threadId,
      turnId: turn.id,
      // The driver's handle to resume the run (Mastra's run id), stored as the request's run id.
      runId: call.resumeToken,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: call.args,
    });
  });
  // Committed: tabs also find the request by reading.
  if (request)
    await deps.signals
      .publish({ kind: 'hitl.changed', threadId: turn.threadId })
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, turnId: turn.id }, 'could not announce a request'),
      );
  return request;
}

/**
 * The runner's end of a run that suspended for an approval (its SuspendRun): the turn waits with
 * no runner (and no lease) until a person decides, and the reply stream ends with the request,
 * under the API's own id (the driver's resume handle stays on the server). Throws when the request
 * could not be recorded (the database is away): the runner tries again, the stream still open.
 */
export async function endWithApprovalRequest(
  deps: { db: Database; signals: Signals; logger: Logger; runnerId: string },
  turn: TurnRow,
  reply: ReplyRecord,
  call: SuspendedCall,
  approvalRequest: (UIMessageChunk & { type: 'tool-approval-request' }) | undefined,
  stream: TurnStream,
): Promise<void> {
  const request = await suspendForApproval(deps, turn, deps.runnerId, reply, call);
  if (request) {
    stream.push({
      ...(approvalRequest ?? {}),
      type: 'tool-approval-request',
      approvalId: request.id,
      toolCallId: request.toolCallId,
    });
  }
  for (const chunk of endOfReply('awaiting_approval')) stream.push(chunk);
  stream.close();
}

/**
 * Stop (or Stop & send) while a turn waits for an approval: the request is cancelled (terminal),
 * the turn `interrupted`, and the tool call closed in the transcript, so the next model call sees
 * a complete exchange. Returns null when the turn was not waiting (any more).
 */
export async function cancelAwaitingTurn(
  deps: {
    db: Database;
    signals: Signals;
    transcript: TranscriptStore;
    driver: RuntimeDriver;
    logger: Logger;
  },
  turn: Pick<TurnRow, 'id' | 'threadId'>,
): Promise<TurnRow | null> {
  let cancelled: HitlRequestRow | undefined;
  const settled = await settleTurn(
    deps,
    turn.threadId,
    async (tx) => {
      const current = await findTurn(tx, turn.threadId, turn.id);
      return current?.status === 'awaiting_approval' ? current : undefined;
    },
    async (tx, current) => {
      const pending = await findPendingRequestOfTurn(tx, current.id);
      cancelled = pending && (await decideRequest(tx, pending.id, 'cancelled'));
      const branch = await findBranch(tx, current.branchId);
      if (branch && cancelled) {
        await closeToolCall(
          deps.transcript,
          branch.memoryThreadId,
          cancelled.toolCallId,
          TOOL_CANCELLED_REASON,
        );
      }
      return { status: 'interrupted', error: null, assistantMessageId: current.assistantMessageId };
    },
  );
  if (cancelled) {
    await deps.signals.publish({ kind: 'hitl.changed', threadId: turn.threadId });
    await deps.driver
      .discard(cancelled.runId)
      .catch((error: unknown) =>
        deps.logger.warn({ err: error, turnId: turn.id }, 'could not discard a run'),
      );
  }
  return settled;
}
