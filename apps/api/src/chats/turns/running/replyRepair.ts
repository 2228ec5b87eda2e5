import type { BranchRow, TurnRow } from '@chat/db';
import type { Memory } from '@mastra/memory';
import { TOOL_CANCELLED_REASON } from '../../../agent/tools';
import type { Logger } from '../../../platform/logger';
import { closeToolCall, ensureReplyPersisted } from '../../branches/transcript';
import type { RuntimeDriver, SuspendedCall } from '../driver/types';

/** How a run of the model ended, as the runner saw it. */
export type Outcome =
  | { status: 'completed' }
  | { status: 'interrupted' }
  | { status: 'failed'; error: string }
  /** The model asked for a tool that needs approval; the driver suspended the run (H3). */
  | { status: 'awaiting_approval' };

export interface RunProgress {
  partialText: string;
  assistantMessageId: string | null;
  /** The reply took in steers: the transcript has several replies of this turn. */
  steered?: boolean;
}

/**
 * A driver stores the user message and the reply as its run ends (the Mastra agent does so even
 * when aborted), but a run that broke off may have stored only part of them. An interrupted or
 * failed turn keeps its user message and its visible partial reply (a failed one as the attempt
 * shown at the queue head, Q11); empty replies go. A run stopped just as it suspended for an
 * approval has its tool call closed as cancelled (and the driver's suspended run discarded), so the
 * transcript never keeps a call without a result. Returns the id of the reply as stored, and
 * whether the transcript is now safely in memory (then the checkpoint text can go).
 */
export async function repairTranscript(
  deps: { memory: Memory; driver: RuntimeDriver; logger: Logger },
  turn: TurnRow,
  context: { branch: BranchRow; ownerId: string; userMessageId: string },
  progress: RunProgress,
  outcome: Outcome,
  suspendedCall: SuspendedCall | undefined,
): Promise<{ assistantMessageId: string | null; persisted: boolean }> {
  try {
    const assistantMessageId = await repair(deps, turn, context, progress, outcome, suspendedCall);
    return { assistantMessageId, persisted: true };
  } catch (error) {
    deps.logger.error({ err: error, turnId: turn.id }, 'could not repair the transcript of a turn');
    return { assistantMessageId: progress.assistantMessageId, persisted: false };
  }
}

async function repair(
  deps: { memory: Memory; driver: RuntimeDriver },
  turn: TurnRow,
  context: { branch: BranchRow; ownerId: string; userMessageId: string },
  progress: RunProgress,
  outcome: Outcome,
  suspendedCall: SuspendedCall | undefined,
): Promise<string | null> {
  const { memory } = deps;
  const memoryThreadId = context.branch.memoryThreadId;
  if (outcome.status === 'completed' || outcome.status === 'awaiting_approval') {
    return progress.assistantMessageId;
  }
  if (suspendedCall) {
    await closeToolCall(memory, memoryThreadId, suspendedCall.toolCallId, TOOL_CANCELLED_REASON);
    await deps.driver.discard(suspendedCall.resumeToken);
  }
  return await ensureReplyPersisted(memory, {
    memoryThreadId,
    resourceId: context.ownerId,
    userMessage: {
      id: context.userMessageId,
      text: turn.text,
      createdAt: turn.startedAt ?? new Date(),
      attachments: turn.attachments,
    },
    assistantText: progress.partialText,
    ...(progress.steered ? { lastReplyId: progress.assistantMessageId } : {}),
  });
}
