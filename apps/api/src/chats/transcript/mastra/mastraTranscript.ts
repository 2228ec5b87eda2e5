import type { Database, Queryable } from '@chat/db';
import type { MastraDBMessage } from '@mastra/core/agent';
import { AIV6Adapter } from '@mastra/core/agent/message-list';
import type { Memory } from '@mastra/memory';
import type {
  StoredContent,
  StoredMessage,
  TranscriptStore,
  TranscriptTables,
  UIMessageToStore,
} from '../transcriptStore';
import {
  copyMemoryMessages,
  deleteLineageOfGoneMessages,
  deleteMemoryMessages,
  deleteMemoryRowsOfUser,
  insertMemoryMessages,
  insertMemoryThreads,
  markBranchTailFork,
  markThreadForks,
  moveMemoryRowsOfUser,
  readBranchMessages,
  readBranchTail,
  readMarkedBranchMessages,
  readMarkedMessagesAfter,
  readMessageIdsBefore,
  readMessageRole,
  readMessagesFrom,
  readModelWindow,
  readNewestMessages,
  readUserMessageBefore,
  saveConversationMessages,
  tallyModelWindow,
  writeBranchLineage,
  writeUserMessageLineage,
} from './memoryTables';
import { toUIMessages } from './uiMessages';

/**
 * The transcript store on Mastra memory. A stored message is Mastra's `MastraDBMessage` as it is
 * (the host's `StoredMessage` names the same fields), so nothing is converted on the way in or
 * out: data written before this seam, or by Mastra's own agent, reads the same.
 */

/** Statements on Mastra's tables in the caller's transaction (memoryTables.ts), and its format. */
export const mastraTranscriptTables: TranscriptTables = {
  readBranchMessages,
  readMarkedBranchMessages,
  readMarkedMessagesAfter,
  readNewestMessages,
  readMessagesFrom,
  readBranchTail,
  readMessageIdsBefore,
  readUserMessageBefore,
  readMessageRole,
  tallyModelWindow,
  readModelWindow,
  insertConversations: insertMemoryThreads,
  insertMessages: insertMemoryMessages,
  copyMessages: copyMemoryMessages,
  deleteMessages: deleteMemoryMessages,
  saveMessages,
  writeBranchLineage,
  writeUserMessageLineage,
  deleteLineageOfGoneMessages,
  markBranchTailFork,
  markThreadForks,
  moveRowsOfUser: moveMemoryRowsOfUser,
  deleteRowsOfUser: deleteMemoryRowsOfUser,
  toUIMessages: (stored) => toUIMessages(stored as unknown as readonly MastraDBMessage[]),
  storedContentOf,
};

/**
 * The content Mastra itself would store for the same UI message (its own converter, one message
 * at a time, so the cost stays linear in the chat).
 */
function storedContentOf(message: UIMessageToStore): string {
  const stored: MastraDBMessage = AIV6Adapter.fromUIMessage({
    id: message.id,
    role: message.role,
    parts: message.parts,
    metadata: { createdAt: message.createdAt },
  } as Parameters<typeof AIV6Adapter.fromUIMessage>[0]);
  return JSON.stringify(stored.content);
}

/**
 * The rows Mastra's `memory.saveMessages` would write, in one statement on the caller's connection
 * or transaction (ADR-046); like it, a system message is never stored.
 */
async function saveMessages(
  q: Queryable,
  conversation: { memoryThreadId: string; resourceId: string },
  messages: readonly StoredMessage[],
): Promise<void> {
  await saveConversationMessages(
    q,
    conversation,
    messages
      .filter((message) => message.role !== 'system')
      .map((message) => ({
        id: message.id,
        threadId: message.threadId ?? conversation.memoryThreadId,
        resourceId: message.resourceId ?? conversation.resourceId,
        role: message.role as 'user' | 'assistant',
        content: JSON.stringify(message.content),
        createdAt: message.createdAt,
        ...(message.type ? { type: message.type } : {}),
      })),
  );
}

const asStored = (messages: readonly MastraDBMessage[]) => messages as unknown as StoredMessage[];

/**
 * Reads and writes through Mastra memory's own API (and so its connections), except a turn's
 * messages, written as Mastra writes them in one statement on ours (`saveMessages`).
 */
export class MastraTranscriptStore implements TranscriptStore {
  constructor(
    private readonly memory: Memory,
    /** Our own connections, for the writes done as one statement (`saveMessages`). */
    private readonly db: Database,
  ) {}

  async recall(memoryThreadId: string): Promise<StoredMessage[]> {
    const thread = await this.memory.getThreadById({ threadId: memoryThreadId });
    if (!thread) return [];
    // `perPage: false`: recall alone returns a last page.
    const { messages } = await this.memory.recall({ threadId: memoryThreadId, perPage: false });
    return asStored(messages);
  }

  async readMessagesById(messageIds: readonly string[]): Promise<StoredMessage[]> {
    const store = await this.memory.storage.getStore('memory');
    if (!store) return [];
    const { messages } = await store.listMessagesById({ messageIds: [...messageIds] });
    return asStored(messages);
  }

  async saveMessages(
    conversation: { memoryThreadId: string; resourceId: string },
    messages: readonly StoredMessage[],
  ): Promise<void> {
    await saveMessages(this.db, conversation, messages);
  }

  async updateMessageContent(messageId: string, content: StoredContent): Promise<void> {
    await this.memory.updateMessages({
      messages: [{ id: messageId, content: content as unknown as MastraDBMessage['content'] }],
    });
  }

  async deleteMessages(messageIds: readonly string[]): Promise<void> {
    await this.memory.deleteMessages([...messageIds]);
  }

  async deleteConversation(memoryThreadId: string): Promise<void> {
    await this.memory.deleteThread(memoryThreadId);
  }
}
