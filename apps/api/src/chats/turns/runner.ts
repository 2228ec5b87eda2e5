import type { HitlDecision } from '@chat/contracts';
import type { BranchRow, Database, HitlRequestRow, Queryable, TurnRow } from '@chat/db';
import { toAISdkStream } from '@mastra/ai-sdk';
import type { UIMessageChunk } from 'ai';
import type { ChatAgent } from '../../agent/chatAgent';
import { ApiError, InvariantError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import type { Signals } from '../../platform/notifications';
import { findBranch } from '../branches/repository';
import { checkpoint } from './checkpoint';
import { callModel, describeModelError, type Segment, suspendedCallOf } from './modelCall';
import { type Outcome, type RunProgress, repairTranscript } from './replyRepair';
import {
  countRunningTurnsOfOwner,
  lastSettledTurnOnBranch,
  leaseFromNow,
  transitionTurn,
} from './repository';
import { settleRun } from './settle';
import { endWithApprovalRequest, type SuspendedCall } from './suspend';
import { endOfReply, TurnStream } from './turnStream';

export interface TurnRunnerDeps {
  db: Database;
  chatAgent: ChatAgent;
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
  controller: AbortController;
  stream: TurnStream;
  done: Promise<void>;
}

/**
 * At most this long between checkpoints of the visible reply: what a crash can lose, and the pace
 * at which viewers on other instances see it grow.
 */
const CHECKPOINT_MS = 500;

/** What a claim refused for too many running turns suggests: replies take seconds. */
const RUNNING_TURNS_RETRY_S = 5;

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
    const limit = this.deps.maxRunningTurnsPerAccount ?? 0;
    const [running, lastSettled] = await Promise.all([
      limit > 0 ? countRunningTurnsOfOwner(tx, turn.threadId) : 0,
      lastSettledTurnOnBranch(tx, branchId),
    ]);
    if (limit > 0 && running >= limit) {
      // The caller's transaction rolls back: nothing was accepted or claimed.
      throw new ApiError(
        'rate_limited',
        `At most ${limit} replies can run at once. Wait for one to finish.`,
        { retryAfter: RUNNING_TURNS_RETRY_S },
        { 'retry-after': String(RUNNING_TURNS_RETRY_S) },
      );
    }
    return await transitionTurn(tx, turn, 'running', {
      branchId,
      handoff: lastSettled?.status === 'interrupted',
      runnerId: this.deps.runnerId,
      leaseExpiresAt: leaseFromNow(this.deps.leaseMs),
      startedAt: new Date(),
      finishedAt: null,
      userMessageId: crypto.randomUUID(),
      assistantMessageId: null,
      model: this.deps.modelName,
      partialText: '',
      error: null,
    });
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

  /** Continues a turn after the person decided on its tool call (the run Mastra suspended). */
  async resume(
    turn: TurnRow,
    ownerId: string,
    request: HitlRequestRow,
    decision: HitlDecision,
  ): Promise<TurnStream> {
    return await this.launch(turn, ownerId, { kind: 'resume', request, decision });
  }

  private async launch(
    turn: TurnRow,
    ownerId: string,
    segment: Segment,
    known?: BranchRow,
  ): Promise<TurnStream> {
    const branch = known?.id === turn.branchId ? known : await findBranch(this.deps.db, turn.branchId);
    if (!branch) throw new InvariantError(`turn ${turn.id} has no branch`);
    const controller = new AbortController();
    const stream = new TurnStream();
    const fresh = this.deps.chatAgent.runs.begin();
    const done = this.run(turn, { branch, ownerId, runId: fresh.runId }, segment, controller, stream)
      .catch((error: unknown) => this.deps.logger.error({ err: error, turnId: turn.id }, 'turn run crashed'))
      .finally(() => {
        fresh.release();
        this.running.delete(turn.id);
        this.checkpointFailing.delete(turn.id);
      });
    this.running.set(turn.id, { controller, stream, done });
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
    { runId, ...context }: { branch: BranchRow; ownerId: string; runId: string },
    segment: Segment,
    controller: AbortController,
    stream: TurnStream,
  ): Promise<void> {
    const { logger } = this.deps;
    const userMessageId = turn.userMessageId ?? crypto.randomUUID();
    // A continued turn keeps the reply it had before it waited.
    const progress: RunProgress = {
      partialText: segment.kind === 'resume' ? turn.partialText : '',
      assistantMessageId: segment.kind === 'resume' ? turn.assistantMessageId : null,
    };
    let streamError: string | undefined;
    let suspended: SuspendedCall | undefined;
    let approvalRequest: (UIMessageChunk & { type: 'tool-approval-request' }) | undefined;
    const heartbeat = setInterval(
      () => void checkpoint(this.deps, this.checkpointFailing, turn.id, progress, controller),
      Math.min(this.deps.leaseMs / 3, CHECKPOINT_MS),
    );

    try {
      const output = await callModel(this.deps.chatAgent, turn, context, segment, {
        userMessageId,
        abortSignal: controller.signal,
        runId,
      });
      // The browser continues the reply it already shows (the message holding the tool call).
      if (segment.kind === 'resume') {
        stream.push({
          type: 'start',
          ...(turn.assistantMessageId ? { messageId: turn.assistantMessageId } : {}),
        });
      }
      const chunks = toAISdkStream(output, {
        from: 'agent',
        version: 'v7',
      }) as ReadableStream<UIMessageChunk>;
      for await (const chunk of chunks) {
        if (chunk.type === 'start' && chunk.messageId) progress.assistantMessageId = chunk.messageId;
        else if (chunk.type === 'text-delta') progress.partialText += chunk.delta;
        else if (chunk.type === 'error') {
          streamError = describeModelError(chunk.errorText);
          stream.push({ type: 'error', errorText: streamError });
          continue;
        } else if (chunk.type === 'data-tool-call-approval') {
          // Mastra's resume handle: it stays on the server (the API's request row keeps it).
          suspended = suspendedCallOf(chunk.data);
          continue;
        } else if (chunk.type === 'tool-approval-request') {
          // Sent once the request is recorded, under the API's own id (below).
          approvalRequest = chunk;
          continue;
        }
        // The stream's own end is sent after the turn is settled (below), so a client that
        // refetches on finish sees the settled state.
        if (chunk.type === 'finish' || chunk.type === 'abort') continue;
        stream.push(chunk);
      }
      // A resumed reply is stored as a message of its own.
      if (segment.kind === 'resume' && progress.partialText !== turn.partialText) {
        progress.assistantMessageId = output.messageId;
      }
    } catch (error) {
      if (!controller.signal.aborted)
        streamError = describeModelError(error instanceof Error ? error.message : String(error));
    } finally {
      clearInterval(heartbeat);
    }

    const outcome: Outcome = controller.signal.aborted
      ? { status: 'interrupted' }
      : streamError !== undefined
        ? { status: 'failed', error: streamError || 'The model call failed.' }
        : suspended
          ? { status: 'awaiting_approval' }
          : { status: 'completed' };

    if (outcome.status === 'failed') {
      logger.warn({ turnId: turn.id, threadId: turn.threadId, error: outcome.error }, 'turn failed');
    }
    if (outcome.status === 'awaiting_approval' && suspended) {
      await endWithApprovalRequest(this.deps, turn, progress, suspended, approvalRequest, stream);
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
      await settleRun(
        this.deps,
        turn,
        stored.persisted ? { ...progress, partialText: '' } : progress,
        outcome,
      );
    } finally {
      // Subscribers always get an end, even if settling failed (recovery settles it later).
      for (const chunk of endOfReply(outcome.status)) stream.push(chunk);
      stream.close();
    }
  }
}
