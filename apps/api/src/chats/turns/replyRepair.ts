import type { BranchRow, TurnRow } from '@chat/db';
import type { ChatAgent } from '../../agent/chatAgent';
import { TOOL_CANCELLED_REASON } from '../../agent/tools';
import { closeToolCall, ensureReplyPersisted, recallBranch } from '../branches/transcript';

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
}

/**
 * Mastra saves the user message and the reply when the stream ends, aborted or not. Some endings
 * need more, and this makes them right before the turn settles. Returns the id of the reply as
 * stored.
 * - A failed turn with no reply text goes back to the queue head (Q11), so its user message (and
 *   the error Mastra stored after it) leaves the transcript (`returnsToQueue`).
 * - An interrupted or failed one keeps its visible partial reply.
 * - A run stopped just as it suspended for an approval: its tool call is closed as cancelled.
 */
export async function repairTranscript(
  chatAgent: ChatAgent,
  turn: TurnRow,
  context: { branch: BranchRow; ownerId: string; userMessageId: string; returnsToQueue: boolean },
  progress: RunProgress,
  outcome: Outcome,
  suspendedCall: { runId: string; toolCallId: string } | undefined,
): Promise<string | null> {
  const { memory } = chatAgent;
  const memoryThreadId = context.branch.memoryThreadId;
  if (outcome.status === 'completed' || outcome.status === 'awaiting_approval') {
    return progress.assistantMessageId;
  }
  if (outcome.status === 'failed' && context.returnsToQueue) {
    const stored = await recallBranch(memory, memoryThreadId);
    const userIndex = stored.findIndex((message) => message.id === context.userMessageId);
    if (userIndex >= 0) await memory.deleteMessages(stored.slice(userIndex).map((message) => message.id));
    return null;
  }
  if (suspendedCall) {
    await closeToolCall(memory, memoryThreadId, suspendedCall.toolCallId, TOOL_CANCELLED_REASON);
    await chatAgent.discardSuspendedRun(suspendedCall.runId);
  }
  return await ensureReplyPersisted(memory, {
    memoryThreadId,
    resourceId: context.ownerId,
    userMessage: { id: context.userMessageId, text: turn.text, createdAt: turn.startedAt ?? new Date() },
    assistantText: progress.partialText,
  });
}
