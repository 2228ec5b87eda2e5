import type { SharedMessage } from '@chat/contracts';
import type { ChatUIMessage } from '~/utils/chatMessages';

export interface SharedToolResult {
  toolName: string;
  output: unknown;
}

/**
 * A snapshot's messages in the chat's own message shape, so they render like the chat: text
 * and image parts as they are, a tool result as a `data-tool-result` part.
 */
export function sharedToChatUIMessages(messages: SharedMessage[]): ChatUIMessage[] {
  return messages.map((message, index) => ({
    id: `shared-${index + 1}`,
    role: message.role,
    parts: message.parts.map((part) => {
      if (part.type === 'text') return { type: 'text' as const, text: part.text };
      // An image, by the share-scoped URL (it stops working when the share is revoked).
      if (part.type === 'file') return { ...part, type: 'file' as const };
      return { type: 'data-tool-result' as const, data: { toolName: part.toolName, output: part.output } };
    }),
    metadata: message.createdAt ? { createdAt: message.createdAt } : {},
  }));
}

export function toolResultsOf(message: Pick<ChatUIMessage, 'parts'>): SharedToolResult[] {
  return message.parts.flatMap((part) =>
    part.type === 'data-tool-result' ? [part.data as SharedToolResult] : [],
  );
}
