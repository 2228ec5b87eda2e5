import type { ThreadEvent } from '@chat/contracts';

export interface ThreadEventHandlers {
  onEvent: (event: ThreadEvent) => void;
  /** Every (re)connection: events may have been missed while disconnected, so catch up. */
  onConnected?: () => void;
  /** The stream dropped (the browser reconnects by itself). */
  onDisconnected?: () => void;
}

/**
 * Follows `GET /api/threads/:id/events` (SSE, one JSON ThreadEvent per `data:` line) for the
 * lifetime of the calling component. EventSource reconnects by itself after a drop.
 */
export function useThreadEvents(threadId: string, handlers: ThreadEventHandlers) {
  let source: EventSource | null = null;

  function open(): void {
    if (source) return;
    source = new EventSource(`/api/threads/${encodeURIComponent(threadId)}/events`);
    source.onopen = () => handlers.onConnected?.();
    // A drop (the browser retries by itself) or a refusal: not attached until it opens again.
    source.onerror = () => handlers.onDisconnected?.();
    source.onmessage = (message: MessageEvent<string>) => {
      let event: ThreadEvent;
      try {
        event = JSON.parse(message.data) as ThreadEvent;
      } catch {
        return; // a keep-alive or a line we do not understand
      }
      if (event && typeof event.type === 'string') handlers.onEvent(event);
    };
  }

  function close(): void {
    source?.close();
    source = null;
  }

  onScopeDispose(close);
  return { open, close };
}
