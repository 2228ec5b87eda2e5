import type { BranchRow, Database, TurnRow } from '@chat/db';
import { TOOL_CANCELLED_REASON } from '../../../agent/tools';
import { storeTurnMessages, type TurnMessages } from '../../branches/transcript';
import type { StoredMessage, TranscriptStore } from '../../transcript/transcriptStore';
import type { RuntimeDriver, SuspendedCall } from '../driver/types';
import type { ReplyRecord } from '../replyRecord';
import { deliveredSteersOf } from '../steer/repository';

/** How a run of the model ended, as the runner saw it. */
export type Outcome =
  | { status: 'completed' }
  | { status: 'interrupted' }
  | { status: 'failed'; error: string }
  /** The model asked for a tool that needs approval; the driver suspended the run (H3). */
  | { status: 'awaiting_approval' };

/**
 * Makes a turn's messages durable in memory before anything says the turn is done (or waits for
 * an approval): its user message and everything the record holds of the reply, whatever the
 * driver's own save did (a save can fail in a database outage while the stream ends normally; a
 * run cut off saves part of it at best). A reply cut off (stopped, failed) has every tool call that
 * has no result yet closed as cancelled (a turn stopped just as it suspended for an approval also
 * has the driver's suspended run discarded), so the transcript never keeps a call without a result.
 * Every steer the database says the turn took in is kept too, the ones the run never heard of
 * included (their boundary's commit went through but its answer was lost, and no later boundary
 * handed them over): after the reply, where the record does not hold them. A runner whose every
 * boundary answered knows them all (`context.steers`) and spares the read. Returns the id of the reply as stored (null when there is none).
 * Throws when memory cannot be written: the caller keeps the turn and tries again.
 */
export async function storeReply(
  deps: { db: Database; transcript: TranscriptStore; driver: RuntimeDriver },
  turn: TurnRow,
  context: ReplyPlace,
  reply: ReplyRecord,
  outcome: Outcome,
  suspendedCall: SuspendedCall | undefined,
): Promise<StoredReply> {
  closeCutOffReply(reply, outcome);
  reply.appendSteers(await deliveredSteersOf(deps.db, turn));
  const stored = await storeTurnMessages(deps.transcript, deps.db, turnMessagesOf(turn, context, reply));
  await discardIfStoppedAsItSuspended(deps, outcome, suspendedCall);
  return { id: stored.replyId, written: stored.written };
}

/** Where a turn's reply is stored: its branch's conversation, whose it is, after which message. */
export interface ReplyPlace {
  branch: BranchRow;
  ownerId: string;
  userMessageId: string;
}

/**
 * A reply cut off (stopped, failed) has every tool call that has no result yet closed as
 * cancelled, so the transcript never keeps a call without a result.
 */
export function closeCutOffReply(reply: ReplyRecord, outcome: Outcome): void {
  if (outcome.status === 'interrupted' || outcome.status === 'failed')
    reply.closeOpenToolCalls(TOOL_CANCELLED_REASON);
}

/** A turn stopped just as it suspended for an approval has the driver's suspended run discarded. */
export async function discardIfStoppedAsItSuspended(
  deps: { driver: RuntimeDriver },
  outcome: Outcome,
  suspendedCall: SuspendedCall | undefined,
): Promise<void> {
  if (suspendedCall !== undefined && outcome.status !== 'awaiting_approval')
    await deps.driver.discard(suspendedCall.resumeToken);
}

/** The turn's messages as its runner recorded them, to be made sure of in memory. */
export function turnMessagesOf(turn: TurnRow, context: ReplyPlace, reply: ReplyRecord): TurnMessages {
  return {
    memoryThreadId: context.branch.memoryThreadId,
    resourceId: context.ownerId,
    userMessage: {
      id: context.userMessageId,
      text: turn.text,
      createdAt: turn.startedAt ?? new Date(),
      attachments: turn.attachments,
    },
    messages: reply.all,
  };
}

/** A reply as `storeReply` left it in memory. */
export interface StoredReply {
  /** The reply's id as stored (null when there is none). */
  id: string | null;
  /** The messages it wrote (none when memory held them all): their tokens can be counted now. */
  written: StoredMessage[];
}
