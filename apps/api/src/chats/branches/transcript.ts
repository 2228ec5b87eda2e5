import type { Attachment, ChatMessage, ChatMessageMetadata } from '@chat/contracts';
import type { MastraDBMessage } from '@mastra/core/agent';
import type { Memory } from '@mastra/memory';
import { storedFileReferencePart, visibleFilePart } from '../attachments/parts';
import { toUIMessages } from './uiMessages';

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

/**
 * Converts stored messages to AI SDK UIMessages with the ids the person sees (`idOf`) and metadata
 * from the API's own records, in linear time (uiMessages.ts).
 */
export function toChatMessages(
  messages: MastraDBMessage[],
  options: {
    idOf: (messageId: string) => string;
    metadataOf: (id: string) => ChatMessageMetadata;
    /** The API's approval request of a tool call, when it has one. */
    approvalIdOf?: (toolCallId: string) => string | undefined;
  },
): ChatMessage[] {
  const byId = new Map(messages.map((message) => [message.id, message]));
  return toUIMessages(messages)
    .filter(
      (message): message is typeof message & { role: 'user' | 'assistant' } =>
        message.role === 'user' || message.role === 'assistant',
    )
    .map((message) => {
      const id = options.idOf(message.id);
      const createdAt = byId.get(message.id)?.createdAt.toISOString();
      const metadata: ChatMessageMetadata = {
        ...(createdAt ? { createdAt } : {}),
        ...options.metadataOf(id),
      };
      const parts = visibleParts(message.parts, options.approvalIdOf ?? (() => undefined));
      return { id, role: message.role, parts, metadata };
    });
}

type Part = { type: string; [key: string]: unknown };

/**
 * The parts a browser renders. Mastra keeps its own bookkeeping on parts (timestamps, provider
 * metadata) and stores model errors as parts; those stay on the server. A tool part's approval is
 * named by the API's request id, never by Mastra's run id.
 */
function visibleParts(
  parts: readonly unknown[],
  approvalIdOf: (toolCallId: string) => string | undefined,
): ChatMessage['parts'] {
  return (parts as Part[])
    .filter((part) => part.type !== 'error')
    .map(({ providerMetadata: _providerMetadata, createdAt: _createdAt, ...stored }) => {
      // An image is a reference to the media route, never bytes.
      const part = visibleFilePart(stored);
      const approval = part.approval as { approved?: boolean; reason?: string } | undefined;
      if (!approval || typeof part.toolCallId !== 'string') return part;
      const id = approvalIdOf(part.toolCallId) ?? part.toolCallId;
      return { ...part, approval: { ...approval, id } };
    });
}

/** A message holds a tool call (its part may carry no text at all). */
function hasToolCall(message: MastraDBMessage): boolean {
  return message.content.parts.some((part) => part.type === 'tool-invocation');
}

/**
 * Closes a tool call that will never get a result (its turn was stopped while it waited for an
 * approval): the call is stored as declined with `reason`, so the card shows its end and the next
 * model call sees a complete tool exchange rather than a dangling call.
 */
export async function closeToolCall(
  memory: Memory,
  memoryThreadId: string,
  toolCallId: string,
  reason: string,
): Promise<void> {
  const stored = await recallBranch(memory, memoryThreadId);
  const message = stored.findLast((candidate) =>
    candidate.content.parts.some(
      (part) => part.type === 'tool-invocation' && part.toolInvocation.toolCallId === toolCallId,
    ),
  );
  if (!message) return;
  const parts = message.content.parts.map((part) => {
    if (part.type !== 'tool-invocation' || part.toolInvocation.toolCallId !== toolCallId) return part;
    if (part.toolInvocation.state === 'result') return part;
    const toolInvocation = {
      ...part.toolInvocation,
      state: 'output-denied',
      approval: { id: toolCallId, approved: false, reason },
    } as unknown as typeof part.toolInvocation;
    return { ...part, toolInvocation };
  });
  await memory.updateMessages({ messages: [{ id: message.id, content: { ...message.content, parts } }] });
}

/** The visible text of one stored message, read by id (no recall of its thread). */
export async function readMessageText(memory: Memory, messageId: string): Promise<string | undefined> {
  const store = await memory.storage.getStore('memory');
  const { messages } = (await store?.listMessagesById({ messageIds: [messageId] })) ?? { messages: [] };
  const [message] = messages;
  return message && textOf(message);
}

export function textOf(message: MastraDBMessage): string {
  return message.content.parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')
    .trim();
}

/**
 * A turn's stored user message and every message of its branch after it, oldest first (empty when
 * the user message is not stored): the tail of the branch only, never the whole transcript, so
 * settling a turn costs the same in a long chat as in a short one.
 */
export async function messagesFromUserMessage(
  memory: Memory,
  memoryThreadId: string,
  userMessageId: string,
): Promise<MastraDBMessage[]> {
  const store = await memory.storage.getStore('memory');
  if (!store) return [];
  const { messages: found } = await store.listMessagesById({ messageIds: [userMessageId] });
  const user = found.find((message) => message.threadId === memoryThreadId);
  if (!user) return [];
  const { messages } = await store.listMessages({
    threadId: memoryThreadId,
    filter: { dateRange: { start: user.createdAt } },
    perPage: false,
    includeTotal: false,
  });
  const index = messages.findIndex((message) => message.id === user.id);
  return index >= 0 ? messages.slice(index) : [user];
}

interface ReplyRecord {
  memoryThreadId: string;
  resourceId: string;
  userMessage: { id: string; text: string; createdAt: Date; attachments?: readonly Attachment[] };
  /** The visible reply text so far; nothing is written for an empty one. */
  assistantText: string;
  /** The reply that streamed last, when the turn has several (a steer split it): it is the one returned. */
  lastReplyId?: string | null;
}

/**
 * Makes sure a turn's user message and its visible partial reply are in memory, and returns the id
 * of the reply as stored (null when there is none). Mastra saves both when a stream ends, even an
 * aborted one (under an id of its own), but not when the process dies mid-stream: the runner and
 * crash recovery call this, and it only writes what is missing.
 */
export async function ensureReplyPersisted(memory: Memory, record: ReplyRecord): Promise<string | null> {
  const turnMessages = await messagesFromUserMessage(memory, record.memoryThreadId, record.userMessage.id);
  const storedUser = turnMessages[0];
  const savedReplies = turnMessages.slice(1).filter((m) => m.role === 'assistant');
  // An abort before the first word leaves an assistant message with nothing visible in it (a
  // tool call is something: its card shows).
  const emptyReplies = savedReplies.filter((message) => textOf(message) === '' && !hasToolCall(message));
  if (emptyReplies.length > 0) await memory.deleteMessages(emptyReplies.map((message) => message.id));
  const visible = savedReplies.filter((message) => textOf(message) !== '');
  const savedReply = visible.find((message) => message.id === record.lastReplyId) ?? visible[0];
  if (savedReply) return savedReply.id;

  const missing: MastraDBMessage[] = [];
  const base = { threadId: record.memoryThreadId, resourceId: record.resourceId };
  if (!storedUser) {
    missing.push({
      ...base,
      id: record.userMessage.id,
      role: 'user',
      createdAt: record.userMessage.createdAt,
      content: {
        format: 2,
        parts: [
          { type: 'text', text: record.userMessage.text },
          // Its images, as references (never bytes), like the message Mastra would have saved.
          ...(record.userMessage.attachments ?? []).map(storedFileReferencePart),
        ],
      },
    });
  }
  const replyId = record.assistantText ? crypto.randomUUID() : null;
  if (replyId) {
    const userCreatedAt = storedUser?.createdAt ?? record.userMessage.createdAt;
    missing.push({
      ...base,
      id: replyId,
      role: 'assistant',
      createdAt: new Date(Math.max(Date.now(), userCreatedAt.getTime() + 1)),
      content: { format: 2, parts: [{ type: 'text', text: record.assistantText }] },
    });
  }
  if (missing.length === 0) return null;
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
  return replyId;
}
