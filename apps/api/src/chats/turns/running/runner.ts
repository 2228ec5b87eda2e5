import type { HitlDecision } from '@chat/contracts';
import type { BranchRow, Database, HitlRequestRow, Queryable, TurnRow } from '@chat/db';
import type { Memory } from '@mastra/memory';
import type { UIMessageChunk } from 'ai';
import { InvariantError } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import type { RuntimeDriver, Segment, SuspendedCall } from '../driver/types';
import { transitionTurn } from '../lifecycle';
import { requeuePendingSteers, takeSteersAtBoundary } from '../steer/delivery';
import { checkpoint } from './checkpoint';
import { claimTurn } from './claim';
import { type RunProgress, repairTranscript } from './replyRepair';
import { leaseFromNow } from './repository';
import {
  assertRunnable,
  failureOf,
  outcomeOf,
  type RunRecord,
  takeChunk,
  takeSteerBoundary,
} from './runRecord';
import { settleRun } from './settle';
import { endOfReply, TurnStream } from './turnStream';

/**
 * How a run that stopped on a tool call hands its turn over to the approval lifecycle (which
 * records the request and ends the stream with it: approval/suspend.ts). Given by the wiring, so
 * running a turn needs nothing of how approvals are decided.
 */
export type SuspendRun = (
  turn: TurnRow,
  progress: RunProgress,
  call: SuspendedCall,
  approvalRequest: (UIMessageChunk & { type: 'tool-approval-request' }) | undefined,
  stream: TurnStream,
) => Promise<void>;

export interface TurnRunnerDeps {
  db: Database;
  /** The transcript store: a run that broke off has its messages repaired there. */
  memory: Memory;
  /** The runtime driver every model call goes through (the Mastra agent; see driver/types.ts). */
  driver: RuntimeDriver;
  /** Hands a run suspended for a tool approval to the approval lifecycle. */
  suspend: SuspendRun;
  signals: Signals;
  logger: Logger;
  /** This instance's id, written on the turns it claims. */
  runnerId: string;
  leaseMs: number;
  /** What the replies it runs are written by (`CHAT_MODEL`), recorded on each turn. */
  modelName: string;
  /** Most turns one account may have running at once, across threads and instances; 0: no limit. */
  maxRunningTurnsPerAccount?: number;
}

interface RunningTurn {
  threadId: string;
  /** Whether the driver's run takes steers in; unknown until it is connected. */
  steerable?: boolean;
  controller: AbortController;
  stream: TurnStream;
  done: Promise<void>;
}

/**
 * At most this long between checkpoints of the visible reply: what a crash can lose, and the pace
 * at which viewers on other instances see it grow.
 */
const CHECKPOINT_MS = 500;

/**
 * Claims turns for this instance and runs them, independent of any HTTP connection. It streams
 * the model's reply into a TurnStream, checkpoints the visible text with a heartbeat (renewing its
 * lease), and settles the turn (which releases the thread's active slot) only after the reply is
 * in memory.
 */
export class TurnRunner {
  private readonly running = new Map<string, RunningTurn>();
  /** Turns whose last checkpoint failed: a database outage is logged once per turn, not every 500 ms. */
  private readonly checkpointFailing = new Set<string>();
  private readonly stopListening: () => void;

  constructor(private readonly deps: TurnRunnerDeps) {
    // Interrupts may arrive from any instance (S1); only the one running the turn acts.
    this.stopListening = deps.signals.subscribe((signal) => {
      if (signal.kind === 'interrupt') this.abort(signal.turnId);
      else if (signal.kind === 'steer') void this.queueSteersItCannotTake(signal.threadId);
    });
  }

  /**
   * Q5: takes the thread's active slot for this instance, to run `turn` on `branchId` (the version
   * shown now: queued turns belong to the thread, not to a branch). Runs inside the caller's
   * transaction, which holds the thread lock; `start` the turn once it has committed.
   *
   * S5: the run gets the hidden handoff instruction when the branch's last settled turn was
   * interrupted, whichever way this claim came (a send, Send now, Stop & send, a viewer's claim, a
   * retry). Decided here, under the lock, from the branch's state, so racing tabs can neither drop
   * nor duplicate it: the turn after a handoff turn sees a settled, uninterrupted one.
   */
  async claim(tx: Queryable, turn: TurnRow, branchId: string): Promise<TurnRow> {
    return await claimTurn(tx, turn, branchId, this.deps);
  }

  /**
   * A turn waiting for an approval runs again on this instance, keeping what it has so far (H3).
   * Inside the deciding transaction, like `claim`; then `resume` it once that has committed.
   */
  async claimResumed(tx: Queryable, turn: TurnRow): Promise<TurnRow> {
    return await transitionTurn(tx, turn, 'running', {
      runnerId: this.deps.runnerId,
      leaseExpiresAt: leaseFromNow(this.deps.leaseMs),
    });
  }

  /**
   * Runs a turn this instance claimed, and tells every instance it started. `branch`: the turn's
   * branch when the caller read it already (else it is read here).
   */
  async start(turn: TurnRow, ownerId: string, branch?: BranchRow): Promise<TurnStream> {
    return await this.launch(turn, ownerId, { kind: 'start' }, branch);
  }

  /** Continues a turn after the person decided on its tool call (the run the driver suspended). */
  async resume(
    turn: TurnRow,
    ownerId: string,
    request: HitlRequestRow,
    decision: HitlDecision,
  ): Promise<TurnStream> {
    const call = { resumeToken: request.runId, toolCallId: request.toolCallId };
    return await this.launch(turn, ownerId, { kind: 'resume', call, decision });
  }

  private async launch(
    turn: TurnRow,
    ownerId: string,
    segment: Segment,
    known?: BranchRow,
  ): Promise<TurnStream> {
    assertRunnable(turn, this.deps.runnerId);
    const branch = known?.id === turn.branchId ? known : await findBranch(this.deps.db, turn.branchId);
    if (!branch) throw new InvariantError(`turn ${turn.id} has no branch`);
    const controller = new AbortController();
    const stream = new TurnStream();
    const done = this.run(turn, { branch, ownerId }, segment, controller, stream)
      .catch((error: unknown) => this.deps.logger.error({ err: error, turnId: turn.id }, 'turn run crashed'))
      .finally(() => {
        this.running.delete(turn.id);
        this.checkpointFailing.delete(turn.id);
      });
    this.running.set(turn.id, { threadId: turn.threadId, controller, stream, done });
    await this.deps.signals.publish({ kind: 'turn.started', threadId: turn.threadId, turnId: turn.id });
    return stream;
  }

  /** The live reply of a turn running on this instance. */
  replyStream(turnId: string): TurnStream | undefined {
    return this.running.get(turnId)?.stream;
  }

  /**
   * Resolves once a turn running on this instance has finished (settled, or left to recovery);
   * undefined when it does not run here.
   */
  finished(turnId: string): Promise<void> | undefined {
    return this.running.get(turnId)?.done;
  }

  abort(turnId: string): boolean {
    const running = this.running.get(turnId);
    if (!running) return false;
    running.controller.abort(new Error('interrupted'));
    return true;
  }

  /** Interrupts every turn of this instance and waits until each is settled (shutdown). */
  async stop(): Promise<void> {
    this.stopListening();
    for (const turnId of this.running.keys()) this.abort(turnId);
    await Promise.all([...this.running.values()].map((running) => running.done));
  }

  private async run(
    turn: TurnRow,
    context: { branch: BranchRow; ownerId: string },
    segment: Segment,
    controller: AbortController,
    stream: TurnStream,
  ): Promise<void> {
    const { logger } = this.deps;
    const userMessageId = turn.userMessageId;
    // The claim gave it a user message id; a turn without one never reached a claim (no fallback).
    if (!userMessageId)
      throw new InvariantError(`turn ${turn.id} reached the runner without a user message id`);
    // A continued turn keeps the reply it had before it waited.
    const record: RunRecord = {
      progress: {
        partialText: segment.kind === 'resume' ? turn.partialText : '',
        assistantMessageId: segment.kind === 'resume' ? turn.assistantMessageId : null,
      },
      resumeToken: turn.resumeToken,
    };
    const { progress } = record;
    const heartbeat = setInterval(
      () => void checkpoint(this.deps, this.checkpointFailing, turn.id, progress, controller),
      Math.min(this.deps.leaseMs / 3, CHECKPOINT_MS),
    );

    try {
      const connection = await this.deps.driver.send({
        turnId: turn.id,
        conversation: { id: context.branch.memoryThreadId, ownerId: context.ownerId },
        message: { id: userMessageId, text: turn.text, attachments: turn.attachments },
        instructions: { handoff: turn.handoff, lateSteer: turn.steer },
        segment,
        abortSignal: controller.signal,
        takeSteers: () => takeSteersAtBoundary(this.deps, turn),
      });
      const running = this.running.get(turn.id);
      if (running) running.steerable = connection.steerable;
      // A run that cannot steer leaves steers (sent before it connected, or later) to the queue.
      if (!connection.steerable) void this.queueSteersItCannotTake(turn.threadId);
      // The browser continues the reply it already shows (the message holding the tool call).
      if (segment.kind === 'resume') {
        stream.push({
          type: 'start',
          ...(turn.assistantMessageId ? { messageId: turn.assistantMessageId } : {}),
        });
      }
      for await (const event of connection.events) {
        if (event.type === 'chunk') takeChunk(event.chunk, record, stream);
        else if (event.type === 'steer-boundary') {
          const { steers, continuationMessageId } = event;
          takeSteerBoundary({ steers, continuationMessageId }, record, stream);
          // The steers left the Dock when the driver took them; tabs hear it once the roll is out.
          await this.deps.signals.publish({ kind: 'queue.changed', threadId: turn.threadId });
        } else if (event.type === 'suspended') record.suspended = event.call;
        else if (event.type === 'resume-token') record.resumeToken = event.token;
        else if (event.type === 'error') {
          if (controller.signal.aborted) continue;
          record.streamError = event.message || failureOf(undefined);
          stream.push({ type: 'error', errorText: record.streamError });
        } else if (segment.kind === 'resume' && progress.partialText !== turn.partialText) {
          // turn-complete: a resumed reply is stored as a message of its own.
          progress.assistantMessageId = event.replyMessageId ?? progress.assistantMessageId;
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) record.streamError = failureOf(error);
    } finally {
      clearInterval(heartbeat);
    }

    const { suspended } = record;
    const outcome = outcomeOf(record, controller.signal.aborted);
    if (outcome.status === 'failed') {
      logger.warn({ turnId: turn.id, threadId: turn.threadId, error: outcome.error }, 'turn failed');
    }
    if (outcome.status === 'awaiting_approval' && suspended) {
      await this.deps.suspend(turn, progress, suspended, record.approvalRequest, stream);
      return;
    }
    const stored = await repairTranscript(
      this.deps,
      turn,
      { ...context, userMessageId },
      progress,
      outcome,
      suspended,
    );
    progress.assistantMessageId = stored.assistantMessageId;
    try {
      // The checkpoint text is a copy of the reply: it goes once the reply is safely in memory.
      const settled = stored.persisted ? { ...progress, partialText: '' } : progress;
      await settleRun(this.deps, turn, settled, outcome, record.resumeToken);
    } finally {
      // Subscribers always get an end, even if settling failed (recovery settles it later).
      for (const chunk of endOfReply(outcome.status)) stream.push(chunk);
      stream.close();
    }
  }

  /**
   * Steers sent to a thread whose run on this instance cannot take them in go to the head of the
   * queue at once (they run next, with the steer reminder). A run that can steer asks for them at
   * its step boundaries instead.
   */
  private async queueSteersItCannotTake(threadId: string): Promise<void> {
    const [turnId, running] =
      [...this.running.entries()].find(([, entry]) => entry.threadId === threadId) ?? [];
    // Not running here, not connected yet (it decides once it is), or it takes steers itself.
    if (running?.steerable !== false) return;
    await requeuePendingSteers(this.deps, threadId).catch((error: unknown) =>
      this.deps.logger.warn({ err: error, turnId }, 'could not queue steers'),
    );
  }
}
