import type { Queryable } from '@chat/db';
import type { Memory } from '@mastra/memory';
import { findCopiesOfOrigin, listLiveBranches } from '../branches/repository';

/**
 * The role of the message the person knows as `messageId` (an origin id, as thread detail shows
 * it) in one of the thread's live versions, or null when the thread holds no such message.
 * Reads only that message and its copies, never a transcript.
 */
export async function roleOfThreadMessage(
  q: Queryable,
  memory: Memory,
  threadId: string,
  messageId: string,
): Promise<string | null> {
  const [live, { copyIds, isCopy }] = await Promise.all([
    listLiveBranches(q, threadId),
    findCopiesOfOrigin(q, threadId, messageId),
  ]);
  if (isCopy) return null;
  const memoryThreads = new Set(live.map((branch) => branch.memoryThreadId));
  const store = await memory.storage.getStore('memory');
  if (!store) return null;
  const { messages } = await store.listMessagesById({ messageIds: [messageId, ...copyIds] });
  const found = messages.find((message) => message.threadId && memoryThreads.has(message.threadId));
  return found?.role ?? null;
}
