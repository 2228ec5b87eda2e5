import { type TokenUsage, turnErrorMessages } from '@chat/contracts';
import type { TurnRow } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { InvariantError } from '../../../platform/errors';
import type { SuspendedCall } from '../driver/types';
import type { ReplyRecord } from '../replyRecord';
import type { Outcome } from '../settle/replyRepair';

/** What the runner gathers from a run's events, to settle the turn with. */
export interface RunRecord {
  /** The reply as it streamed (every message, tool steps and steers included). */
  reply: ReplyRecord;
  streamError?: string;
  /** The run went silent for longer than the runner waits (it was stopped as failed). */
  idle?: boolean;
  suspended?: SuspendedCall;
  approvalRequest?: UIMessageChunk & { type: 'tool-approval-request' };
  resumeToken: string | null;
  /** The run's token usage as the model reported it (C1). */
  usage?: TokenUsage;
  /** A6: the agent compacted its own conversation during the run. */
  compacted?: boolean;
}

/**
 * One reply chunk from the driver (errors come as the driver's `error` event): recorded. Returns
 * whether subscribers get it now: not what comes later, the approval request (under the API's
 * own id, once it is recorded) and the stream's end (sent once the turn is settled, so a client
 * that refetches on finish sees it settled).
 */
export function takeChunk(chunk: UIMessageChunk, record: RunRecord): boolean {
  record.reply.take(chunk);
  if (chunk.type === 'tool-approval-request') {
    record.approvalRequest = chunk;
    return false;
  }
  return chunk.type !== 'finish' && chunk.type !== 'abort';
}

/**
 * The chunks after which the reply so far is a finished step: a tool's outcome, a step's end. The
 * runner makes the reply durable up to there before it passes them on, so what a person saw of a
 * finished step is never lost to a crash.
 */
export function endsStep(chunk: UIMessageChunk): boolean {
  return (
    chunk.type === 'tool-output-available' ||
    chunk.type === 'tool-output-error' ||
    chunk.type === 'tool-output-denied' ||
    chunk.type === 'finish-step'
  );
}

/**
 * Fails fast on a turn that reaches the runner without the runtime data a run needs (claimed by this
 * runner, running, with its user message id): nothing falls back silently. Returns that id.
 */
export function assertRunnable(turn: TurnRow, runnerId: string): string {
  if (turn.status !== 'running' || turn.runnerId !== runnerId || !turn.userMessageId) {
    throw new InvariantError(`turn ${turn.id} reached the runner without being claimed by it`);
  }
  return turn.userMessageId;
}

/** How a run ended, as the runner saw it. */
export function outcomeOf(record: RunRecord, aborted: boolean): Outcome {
  if (record.idle) return { status: 'failed', error: turnErrorMessages.modelIdle };
  if (aborted) return { status: 'interrupted' };
  if (record.streamError !== undefined)
    return { status: 'failed', error: record.streamError || turnErrorMessages.modelFailed };
  return record.suspended ? { status: 'awaiting_approval' } : { status: 'completed' };
}
