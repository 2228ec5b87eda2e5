import type { BranchRow, TurnRow } from '@chat/db';
import type { ChatAgent } from '../../../agent/chatAgent';
import { TOOL_CANCELLED_REASON } from '../../../agent/tools';
import type { Logger } from '../../../platform/logger';
import { closeToolCall, ensureReplyPersisted } from '../../branches/transcript';

/** How a run of the model ended, as the runner saw it. */
export type Outcome =
  | { status: 'completed' }
  | { status: 'interrupted' }
  | { status: 'failed'; error: string }
  /** The model asked for a tool that needs approval; Mastra suspended the run (H3). */
  | { status: 'awaiting_approval' };

export interface RunProgress {
  partialText: string;
  assistantMessageId: string | null;
  /** The reply took in steers: the transcript has several replies of this turn. */
  steered?: boolean;
}

/**
 * Mastra saves the user message and the reply when the stream ends, aborted or not. An interrupted
 * or failed turn keeps its user message and its visible partial reply (a failed one as the attempt
 * shown at the queue head, Q11); empty replies go. A run stopped just as it suspended for an
 * approval has its tool call closed as cancelled (and Mastra's snapshot discarded), so the
 * transcript never keeps a call without a result. Returns the id of the reply as stored, and
 * whether the transcript is now safely in memory (then the checkpoint text can go).
 */
export async function repairTranscript(
  deps: { chatAgent: ChatAgent; logger: Logger },
  turn: TurnRow,
  context: { branch: BranchRow; ownerId: string; userMessageId: string },
  progress: RunProgress,
  outcome: Outcome,
  suspendedCall: { runId: string; toolCallId: string } | undefined,
): Promise<{ assistantMessageId: string | null; persisted: boolean }> {
  try {
    const assistantMessageId = await repair(deps.chatAgent, turn, context, progress, outcome, suspendedCall);
    return { assistantMessageId, persisted: true };
  } catch (error) {
    deps.logger.error({ err: error, turnId: turn.id }, 'could not repair the transcript of a turn');
    return { assistantMessageId: progress.assistantMessageId, persisted: false };
  }
}

async function repair(
  chatAgent: ChatAgent,
  turn: TurnRow,
  context: { branch: BranchRow; ownerId: string; userMessageId: string },
  progress: RunProgress,
  outcome: Outcome,
  suspendedCall: { runId: string; toolCallId: string } | undefined,
): Promise<string | null> {
  const { memory } = chatAgent;
  const memoryThreadId = context.branch.memoryThreadId;
  if (outcome.status === 'completed' || outcome.status === 'awaiting_approval') {
    return progress.assistantMessageId;
  }
  if (suspendedCall) {
    await closeToolCall(memory, memoryThreadId, suspendedCall.toolCallId, TOOL_CANCELLED_REASON);
    await chatAgent.discardSuspendedRun(suspendedCall.runId);
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
