import { turnErrorMessages } from '@chat/contracts';
import type { TurnRow } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { InvariantError } from '../../../platform/errors';
import type { SteerMessage, SuspendedCall } from '../driver/types';
import type { Outcome, RunProgress } from './replyRepair';
import type { TurnStream } from './turnStream';

/** What the runner gathers from a run's events, to settle the turn with. */
export interface RunRecord {
  progress: RunProgress;
  streamError?: string;
  suspended?: SuspendedCall;
  approvalRequest?: UIMessageChunk & { type: 'tool-approval-request' };
  resumeToken: string | null;
}

/**
 * One reply chunk from the driver (errors come as the driver's `error` event): recorded, and
 * passed to subscribers except what comes later: the approval request (under the API's own id,
 * once it is recorded) and the stream's end (sent once the turn is settled, so a client that
 * refetches on finish sees it settled).
 */
export function takeChunk(chunk: UIMessageChunk, record: RunRecord, stream: TurnStream): void {
  const { progress } = record;
  if (chunk.type === 'start' && chunk.messageId) {
    // After a steer boundary the reply goes on as the continuation message (already recorded).
    if (!progress.steered) progress.assistantMessageId = chunk.messageId;
  } else if (chunk.type === 'text-delta') progress.partialText += chunk.delta;
  else if (chunk.type === 'tool-approval-request') {
    record.approvalRequest = chunk;
    return;
  }
  if (chunk.type === 'finish' || chunk.type === 'abort') return;
  stream.push(chunk);
}

/**
 * The reference's `steer-boundary`: the reply took steers in. Subscribers roll their transcript
 * (the data part), and the checkpoint follows the continuation from here (the reply so far is a
 * finished message of its own).
 */
export function takeSteerBoundary(
  boundary: { steers: SteerMessage[]; continuationMessageId: string },
  record: RunRecord,
  stream: TurnStream,
): void {
  stream.push({ type: 'data-steer-boundary', data: boundary });
  record.progress.steered = true;
  record.progress.assistantMessageId = boundary.continuationMessageId;
  record.progress.partialText = '';
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
  if (aborted) return { status: 'interrupted' };
  if (record.streamError !== undefined)
    return { status: 'failed', error: record.streamError || turnErrorMessages.modelFailed };
  return record.suspended ? { status: 'awaiting_approval' } : { status: 'completed' };
}

/** A run that broke off with an exception, as a person may read it: the first line of its message. */
export function failureOf(error: unknown): string {
  const message = error instanceof Error ? error.message : error === undefined ? '' : String(error);
  return message.split('\n')[0]?.trim() || turnErrorMessages.modelFailed;
}
