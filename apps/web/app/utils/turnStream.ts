import { parseJsonEventStream, readUIMessageStream, type UIMessageChunk, uiMessageChunkSchema } from 'ai';
import type { ChatUIMessage } from './chatMessages';

/** How often at most a streaming reply is handed on (the page renders at this pace, not per chunk). */
const SNAPSHOT_INTERVAL_MS = 40;

/**
 * Reads one turn's reply from its HTTP response (the AI SDK UI message stream, SSE) with the AI
 * SDK's own parser, handing on snapshots of the reply as it grows: the first at once, then at most
 * one per SNAPSHOT_INTERVAL_MS, and the last when it ends. `continues`: the reply it carries on
 * (after an approval, the stream continues the message holding the tool call). Resolves when the
 * stream ends, with the error it ended with, if any; an abort through `signal` is not an error.
 */
export async function readTurnStream(
  response: Response,
  options: {
    signal: AbortSignal;
    continues?: ChatUIMessage;
    onSnapshot: (message: ChatUIMessage) => void;
  },
): Promise<{ error?: string }> {
  const { signal, onSnapshot } = options;
  let error: string | undefined;
  let pending: ChatUIMessage | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    if (!pending) return;
    const message = pending;
    pending = null;
    onSnapshot(message);
    timer = setTimeout(flush, SNAPSHOT_INTERVAL_MS);
  };
  try {
    if (!response.body) return {};
    const chunks = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream<{ success: boolean; value?: UIMessageChunk; error?: unknown }, UIMessageChunk>({
        transform(chunk, controller) {
          if (!chunk.success) throw chunk.error;
          controller.enqueue(chunk.value as UIMessageChunk);
        },
      }),
    );
    const messages = readUIMessageStream<ChatUIMessage>({
      // The parser writes into the message it continues: give it a copy.
      message: options.continues ? structuredClone(options.continues) : undefined,
      stream: chunks,
      onError: (cause) => {
        error ??= cause instanceof Error ? cause.message : String(cause);
      },
    });
    for await (const message of messages) {
      pending = message;
      if (timer === null) flush();
    }
  } catch (cause) {
    error ??= cause instanceof Error ? cause.message : String(cause);
  } finally {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending) onSnapshot(pending);
  }
  return signal.aborted ? {} : { error };
}
