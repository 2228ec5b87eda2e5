import type { ChatMessage, ChatMessageMetadata } from '@chat/contracts';
import { toAISdkMessages } from '@mastra/ai-sdk/ui';
import type { MastraDBMessage } from '@mastra/core/agent';
import type { Memory } from '@mastra/memory';

/**
 * Reading and repairing a branch's executed transcript in Mastra memory (the canonical store, O1).
 */

/** Every message of a branch, oldest first (`perPage: false`: recall alone returns a last page). */
export async function recallBranch(memory: Memory, memoryThreadId: string): Promise<MastraDBMessage[]> {
  const thread = await memory.getThreadById({ threadId: memoryThreadId });
  if (!thread) return [];
  const { messages } = await memory.recall({ threadId: memoryThreadId, perPage: false });
  return messages;
}

/** Converts stored messages to AI SDK UIMessages, with metadata from the API's own records. */
export function toChatMessages(
  messages: MastraDBMessage[],
  metadataOf: (message: MastraDBMessage) => ChatMessageMetadata,
): ChatMessage[] {
  const byId = new Map(messages.map((message) => [message.id, message]));
  return toAISdkMessages(messages, { version: 'v7' })
    .filter((message) => message.role === 'user' || message.role === 'assistant')
    .map((message) => {
      const stored = byId.get(message.id);
      const metadata: ChatMessageMetadata = stored
        ? { createdAt: stored.createdAt.toISOString(), ...metadataOf(stored) }
        : {};
      return {
        id: message.id,
        role: message.role,
        parts: message.parts as ChatMessage['parts'],
        metadata,
      };
    });
}

export function textOf(message: MastraDBMessage): string {
  return message.content.parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')
    .trim();
}

interface ReplyRecord {
  memoryThreadId: string;
  resourceId: string;
  userMessage: { id: string; text: string; createdAt: Date };
  /** The visible reply text so far; nothing is written for an empty one. */
  assistantMessage: { id: string; text: string };
}

/**
 * Makes sure a turn's user message and its visible partial reply are in memory. Mastra saves both
 * when a stream ends, even an aborted one, but not when the process dies mid-stream: recovery and
 * the runner's own checks call this, and it only writes what is missing.
 */
export async function ensureReplyPersisted(memory: Memory, record: ReplyRecord): Promise<void> {
  const existing = new Set((await recallBranch(memory, record.memoryThreadId)).map((message) => message.id));
  const missing: MastraDBMessage[] = [];
  if (!existing.has(record.userMessage.id)) {
    missing.push({
      id: record.userMessage.id,
      role: 'user',
      createdAt: record.userMessage.createdAt,
      threadId: record.memoryThreadId,
      resourceId: record.resourceId,
      content: { format: 2, parts: [{ type: 'text', text: record.userMessage.text }] },
    });
  }
  if (record.assistantMessage.text && !existing.has(record.assistantMessage.id)) {
    missing.push({
      id: record.assistantMessage.id,
      role: 'assistant',
      createdAt: new Date(record.userMessage.createdAt.getTime() + 1),
      threadId: record.memoryThreadId,
      resourceId: record.resourceId,
      content: { format: 2, parts: [{ type: 'text', text: record.assistantMessage.text }] },
    });
  }
  if (missing.length === 0) return;
  if (!(await memory.getThreadById({ threadId: record.memoryThreadId }))) {
    await memory.saveThread({
      thread: {
        id: record.memoryThreadId,
        resourceId: record.resourceId,
        title: '',
        createdAt: new Date(),
        updatedAt: new Date(),
        metadata: {},
      },
    });
  }
  await memory.saveMessages({ messages: missing });
}
