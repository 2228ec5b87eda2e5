import type { Queryable } from '@chat/db';
import { findCopiesOfOrigin, listLiveBranches } from '../branches/repository';
import type { TranscriptStore } from '../transcript/transcriptStore';

/**
 * The role of the message the person knows as `messageId` (an origin id, as thread detail shows
 * it) in one of the thread's live versions, or null when the thread holds no such message.
 * Reads only that message and its copies, never a transcript.
 */
export async function roleOfThreadMessage(
  q: Queryable,
  transcript: TranscriptStore,
  threadId: string,
  messageId: string,
): Promise<string | null> {
  const [live, { copyIds, isCopy }] = await Promise.all([
    listLiveBranches(q, threadId),
    findCopiesOfOrigin(q, threadId, messageId),
  ]);
  if (isCopy) return null;
  const memoryThreads = new Set(live.map((branch) => branch.memoryThreadId));
  const messages = await transcript.readMessagesById([messageId, ...copyIds]);
  const found = messages.find((message) => message.threadId && memoryThreads.has(message.threadId));
  return found?.role ?? null;
}
