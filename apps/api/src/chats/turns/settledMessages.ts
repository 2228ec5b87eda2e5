import type { ChatMessage } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { findBranch } from '../branches/repository';
import { messagesFromUserMessage, toChatMessages } from '../branches/transcript';
import { listRequests } from './approval/repository';
import { readMessageMarks } from './marks';
import { hasEarlierTurnOnBranch } from './repository';

/**
 * The final messages of a settled turn (its user message and reply, as the thread detail shows
 * them), for the `turn.settled` event: a tab replaces its copy of the turn with these instead of
 * reading the whole detail again. Reads only the turn's tail of its branch. Undefined when a tab
 * could not apply them on their own: nothing stored, or the first turn of an edited version (its
 * user message carries version info that only the detail computes).
 */
export async function settledTurnMessages(q: Queryable, turn: TurnRow): Promise<ChatMessage[] | undefined> {
  if (!turn.userMessageId) return undefined;
  const branch = await findBranch(q, turn.branchId);
  if (!branch) return undefined;
  if (branch.parentBranchId !== null && !(await hasEarlierTurnOnBranch(q, turn))) return undefined;
  const stored = await messagesFromUserMessage(q, branch.memoryThreadId, turn.userMessageId);
  if (stored.length === 0) return undefined;
  const ids = stored.map((message) => message.id);
  const [marks, hitl] = await Promise.all([
    readMessageMarks(q, turn.threadId, ids),
    listRequests(q, turn.threadId),
  ]);
  const approvalIds = new Map(hitl.map((request) => [request.toolCallId, request.id]));
  // Messages a turn writes are never copies: the id a person sees is the stored one.
  return toChatMessages(stored, {
    idOf: (id) => id,
    metadataOf: (id) => marks.get(id) ?? {},
    approvalIdOf: (toolCallId) => approvalIds.get(toolCallId),
  });
}
