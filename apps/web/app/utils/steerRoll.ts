import type { SteerBoundaryData } from '@chat/contracts';
import { type ChatUIMessage, optimisticUserMessage } from './chatMessages';

const BOUNDARY = 'data-steer-boundary';

/**
 * The transcript as things happened while a reply streams steers in: a reply holding a
 * `data-steer-boundary` part shows as the reply so far (a finished message), the steers as the
 * person's messages after it, and the continuation as a new reply. The server stores the same
 * shape, so once the stream ends the refetched transcript looks the same.
 */
export function rollSteers(messages: ChatUIMessage[]): ChatUIMessage[] {
  // Only the reply streaming now can hold a boundary (the server stores the rolled shape), and it
  // is the last message: a delta costs a look at one message, however long the chat.
  const last = messages.at(-1);
  if (!last || !hasBoundary(last)) return messages;
  return [...messages.slice(0, -1), ...roll(last)];
}

function hasBoundary(message: ChatUIMessage): boolean {
  return message.role === 'assistant' && message.parts.some((part) => part.type === BOUNDARY);
}

function roll(message: ChatUIMessage): ChatUIMessage[] {
  const shown: ChatUIMessage[] = [];
  let current: ChatUIMessage = { ...message, parts: [], metadata: { turnId: message.metadata?.turnId } };
  for (const part of message.parts) {
    if (part.type !== BOUNDARY) {
      current.parts.push(part);
      continue;
    }
    const boundary = (part as { data: SteerBoundaryData }).data;
    shown.push(current);
    for (const steer of boundary.steers) {
      const shownSteer = optimisticUserMessage({ id: steer.turnId, text: steer.text });
      shown.push({ ...shownSteer, metadata: { ...shownSteer.metadata, steered: true } });
    }
    current = { ...message, id: boundary.continuationMessageId, parts: [] };
  }
  shown.push(current);
  return shown;
}
