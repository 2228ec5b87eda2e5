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
 * lifetime of the calling component. EventSource reconnects by itself after a dropped
 * connection, but gives up for good on an error answer (the API down behind the proxy): then
 * this opens it again with backoff.
 */
export function useThreadEvents(threadId: string, handlers: ThreadEventHandlers) {
  let source: EventSource | null = null;
  let closed = false;
  const backoff = createBackoff();

  function connect(): void {
    const next = new EventSource(`/api/threads/${encodeURIComponent(threadId)}/events`);
    source = next;
    next.onopen = () => {
      backoff.reset();
      handlers.onConnected?.();
    };
    next.onerror = () => {
      // A drop (the browser retries by itself) or a refusal: not attached until it opens again.
      handlers.onDisconnected?.();
      if (next.readyState !== EventSource.CLOSED || closed) return;
      backoff.after(() => {
        if (!closed) connect();
      });
    };
    next.onmessage = (message: MessageEvent<string>) => {
      let event: ThreadEvent;
      try {
        event = JSON.parse(message.data) as ThreadEvent;
      } catch {
        return; // a keep-alive or a line we do not understand
      }
      if (event && typeof event.type === 'string') handlers.onEvent(event);
    };
  }

  function open(): void {
    if (source) return;
    closed = false;
    connect();
  }

  function close(): void {
    closed = true;
    backoff.reset();
    source?.close();
    source = null;
  }

  onScopeDispose(close);
  return { open, close };
}
