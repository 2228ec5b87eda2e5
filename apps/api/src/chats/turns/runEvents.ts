import type { Database, TurnRow } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { InvariantError } from '../../platform/errors';
import type { Signals } from '../../platform/notifications';
import type { RuntimeConnection, SteerMessage } from './driver/types';
import { suspendedCallOf } from './modelCall';
import type { Outcome, RunProgress } from './replyRepair';
import { listPendingSteers, markSteersDelivered, requeueSteers } from './steerRepository';
import type { SuspendedCall } from './suspend';
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
 * passed to subscribers except what stays on the server (Mastra's resume handle) or comes later (the approval request under the API's own id; the
 * stream's end, sent once the turn is settled, so a client that refetches on finish sees it settled).
 */
export function takeChunk(chunk: UIMessageChunk, record: RunRecord, stream: TurnStream): void {
  const { progress } = record;
  if (chunk.type === 'start' && chunk.messageId) {
    // After a steer boundary the reply goes on as the continuation message (already recorded).
    if (!progress.steered) progress.assistantMessageId = chunk.messageId;
  } else if (chunk.type === 'text-delta') progress.partialText += chunk.delta;
  else if (chunk.type === 'data-tool-call-approval') {
    record.suspended = suspendedCallOf(chunk.data);
    return;
  } else if (chunk.type === 'tool-approval-request') {
    record.approvalRequest = chunk;
    return;
  }
  if (chunk.type === 'finish' || chunk.type === 'abort') return;
  stream.push(chunk);
}

/**
 * The reference's `steer-boundary`: the reply took steers in. Subscribers roll their transcript
 * (the data part), the steers' rows become `delivered`, and the checkpoint follows the
 * continuation from here (the reply so far is a finished message of its own).
 */
export async function takeSteerBoundary(
  deps: { db: Database; signals: Signals },
  turn: TurnRow,
  boundary: { steers: SteerMessage[]; continuationMessageId: string },
  record: RunRecord,
  stream: TurnStream,
): Promise<void> {
  stream.push({ type: 'data-steer-boundary', data: boundary });
  record.progress.steered = true;
  record.progress.assistantMessageId = boundary.continuationMessageId;
  record.progress.partialText = '';
  await deps.db.transaction((tx) => markSteersDelivered(tx, turn.threadId, turn.branchId, boundary.steers));
  await deps.signals.publish({ kind: 'queue.changed', threadId: turn.threadId });
}

/** The reference's `steer-undelivered`: steers the run never took in go to the head of the queue. */
export async function takeUndeliveredSteers(
  deps: { db: Database; signals: Signals },
  threadId: string,
  steers: SteerMessage[],
): Promise<void> {
  const ids = steers.map((steer) => steer.turnId);
  const requeued = await deps.db.transaction((tx) => requeueSteers(tx, threadId, ids));
  if (requeued.length > 0) await deps.signals.publish({ kind: 'queue.changed', threadId });
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

/**
 * Hands the thread's pending steers to its run (the driver delivers them at the next step boundary
 * and ignores ones it already has). A driver that cannot steer gets none: they are queued at the
 * head at once, and run with the steer reminder.
 */
export async function redirectSteers(
  deps: { db: Database; signals: Signals },
  threadId: string,
  connection: RuntimeConnection,
): Promise<void> {
  const steers = (await listPendingSteers(deps.db, threadId)).map((row) => ({
    turnId: row.id,
    messageId: crypto.randomUUID(),
    text: row.text,
  }));
  if (steers.length === 0) return;
  if (connection.redirect) connection.redirect(steers);
  else await takeUndeliveredSteers(deps, threadId, steers);
}

/** How a run ended, as the runner saw it. */
export function outcomeOf(record: RunRecord, aborted: boolean): Outcome {
  if (aborted) return { status: 'interrupted' };
  if (record.streamError !== undefined)
    return { status: 'failed', error: record.streamError || 'The model call failed.' };
  return record.suspended ? { status: 'awaiting_approval' } : { status: 'completed' };
}
