import { type ChatMessage, type ChatMessageMetadata, mediaUrl, type Turn } from '@chat/contracts';
import type { UIMessage } from 'ai';

/** A transcript message as `useChat` holds it: an AI SDK UIMessage with our metadata. */
export type ChatUIMessage = UIMessage<ChatMessageMetadata>;

/** Thread detail messages are UIMessages with loosely typed parts (see @chat/contracts). */
export function toChatUIMessages(messages: ChatMessage[]): ChatUIMessage[] {
  return messages.map((message) => ({ ...message, metadata: message.metadata ?? {} }) as ChatUIMessage);
}

export function textOfMessage(message: Pick<ChatUIMessage, 'parts'>): string {
  return message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

const OPTIMISTIC_PREFIX = 'turn-';

/**
 * The user message of a turn this tab shows before the server's transcript has it
 * (a send that streams, a claimed queue head, another tab's turn). Replaced by the
 * server's own message on the next refetch.
 */
export function optimisticUserMessage(
  turn: Pick<Turn, 'id' | 'text'> & Partial<Pick<Turn, 'attachments'>>,
): ChatUIMessage {
  // Its images, by the same media URLs the server's transcript will give them.
  const images = (turn.attachments ?? []).map((attachment) => ({
    type: 'file' as const,
    mediaType: attachment.mediaType,
    url: mediaUrl(attachment.id),
    filename: attachment.name,
  }));
  return {
    id: `${OPTIMISTIC_PREFIX}${turn.id}-user`,
    role: 'user',
    parts: [{ type: 'text', text: turn.text }, ...images],
    metadata: { turnId: turn.id },
  };
}

/**
 * A message this tab shows before the server has it under its own id. Edit and delete name
 * messages by that id, so they wait for the refetch that replaces it.
 */
export function isOptimisticMessage(message: Pick<ChatUIMessage, 'id'>): boolean {
  return message.id.startsWith(OPTIMISTIC_PREFIX);
}

/** Whether the transcript already holds the user message that started `turn`. */
export function hasUserMessageOf(
  messages: readonly ChatUIMessage[],
  turn: Pick<Turn, 'id' | 'text'>,
): boolean {
  if (messages.some((message) => message.role === 'user' && message.metadata?.turnId === turn.id))
    return true;
  // Without a turnId in the metadata, the turn's message can only be the last user message.
  const lastUser = messages.findLast((message) => message.role === 'user');
  const lastUserIndex = lastUser ? messages.lastIndexOf(lastUser) : -1;
  const repliedAfter = messages.slice(lastUserIndex + 1).some((message) => message.role === 'assistant');
  return lastUser !== undefined && !repliedAfter && textOfMessage(lastUser) === turn.text;
}
