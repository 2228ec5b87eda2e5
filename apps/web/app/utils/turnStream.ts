import { useChat } from '@ai-sdk/vue';
import { COMPACTION_PART, type CompactionProgress } from '@chat/contracts';
import { type ChatTransport, parseJsonEventStream, type UIMessageChunk, uiMessageChunkSchema } from 'ai';
import { effectScope, watch } from 'vue';
import type { ChatUIMessage } from './chatMessages';

/** How often at most a streaming reply is handed on (the page renders at this pace, not per chunk). */
const SNAPSHOT_INTERVAL_MS = 40;

/**
 * The `useChat` transport of one turn stream whose HTTP response is already open: this API's
 * requests that may start a turn are made by the page (a send to a busy thread is answered `202`
 * and queued, and must never enter the transcript), so the chat only reads the answer. Error
 * chunks are reported and dropped here: the chat would stop reading at the first one, and the
 * reply's closing chunks (its failed mark) come after it.
 */
class OpenTurnResponse implements ChatTransport<ChatUIMessage> {
  constructor(
    private readonly body: ReadableStream<Uint8Array>,
    private readonly onErrorChunk: (errorText: string) => void,
    private readonly onCompaction: (progress: CompactionProgress) => void,
  ) {}

  async sendMessages(): Promise<ReadableStream<UIMessageChunk>> {
    const { onErrorChunk, onCompaction } = this;
    return parseJsonEventStream({ stream: this.body, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream<{ success: boolean; value?: UIMessageChunk; error?: unknown }, UIMessageChunk>({
        transform(parsed, controller) {
          if (!parsed.success) throw parsed.error;
          const chunk = parsed.value as UIMessageChunk;
          if (chunk.type === 'error') onErrorChunk(chunk.errorText);
          // A compaction before the reply (C3) is the page's news, never a part of the reply.
          else if (chunk.type === COMPACTION_PART) onCompaction((chunk as { data: CompactionProgress }).data);
          else controller.enqueue(chunk);
        },
      }),
    );
  }

  async reconnectToStream(): Promise<null> {
    return null;
  }
}

/**
 * Reads one turn's reply from its HTTP response (the AI SDK UI message stream, SSE) with
 * `@ai-sdk/vue`'s chat, handing on snapshots of the reply as it grows: the first at once, then at
 * most one per SNAPSHOT_INTERVAL_MS, and the last when it ends. The chat lives for this one stream:
 * the page's state (the reducer) keeps the transcript, so the chat never holds a second copy of
 * it. `continues`: the reply it carries on (after an approval, the stream continues the message
 * holding the tool call). Resolves when the stream ends, with the error it ended with, if any; an
 * abort through `signal` is not an error. Kept on `useChat` rather than `ai`'s
 * `readUIMessageStream` (which would read the stream alone) because the product's architecture
 * has the page read its replies through `@ai-sdk/vue`'s chat, whose throttle also paces the snapshots.
 */
export async function readTurnStream(
  response: Response,
  options: {
    signal: AbortSignal;
    continues?: ChatUIMessage;
    onSnapshot: (message: ChatUIMessage) => void;
    /** A compaction of the model's context ran before the reply (C3): its progress. */
    onCompaction?: (progress: CompactionProgress) => void;
  },
): Promise<{ error?: string }> {
  const { signal, onSnapshot } = options;
  if (!response.body) return {};
  let error: string | undefined;
  const keepFirst = (cause: string) => {
    error ??= cause;
  };
  const scope = effectScope(true);
  try {
    await scope.run(async () => {
      const chat = useChat<ChatUIMessage>({
        transport: new OpenTurnResponse(
          response.body as ReadableStream<Uint8Array>,
          keepFirst,
          options.onCompaction ?? (() => {}),
        ),
        // The chat writes into the message it continues: give it a copy.
        messages: options.continues ? [structuredClone(options.continues)] : [],
        throttle: SNAPSHOT_INTERVAL_MS,
        onError: (cause) => keepFirst(cause.message),
      });
      watch(
        chat.messages,
        (messages) => {
          const reply = messages.at(-1);
          if (reply?.role === 'assistant') onSnapshot(reply);
        },
        { flush: 'sync' },
      );
      const stop = () => void chat.stop();
      signal.addEventListener('abort', stop, { once: true });
      try {
        // No message: the chat answers from its last one, continuing it when it is the reply.
        await chat.sendMessage();
      } finally {
        signal.removeEventListener('abort', stop);
      }
    });
  } catch (cause) {
    keepFirst(cause instanceof Error ? cause.message : String(cause));
  } finally {
    scope.stop();
  }
  return signal.aborted ? {} : { error };
}
