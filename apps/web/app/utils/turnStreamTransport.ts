import type { ChatRequestOptions, UIMessageChunk } from 'ai';
import { DefaultChatTransport } from 'ai';
import { ApiRequestError } from './apiRequest';
import type { ChatUIMessage } from './chatMessages';

/** Opens the HTTP response of one turn's UI message stream. */
export type OpenTurnStream = (signal: AbortSignal) => Promise<Response>;

/**
 * The `useChat` transport for this API. Why not `sendMessage` + `prepareSendMessagesRequest`:
 * `AbstractChat.sendMessage` appends the user message to `chat.messages` before the request
 * is even made, but a send to a busy thread is answered `202` and queued, and a queued turn
 * must never enter the transcript (it lives in the Queue Dock). So useLiveTurn makes every
 * request itself, and only when the answer is a stream (`200 text/event-stream` from a send,
 * a claim, a send-now, or an attach to a running turn) hands it here and calls
 * `chat.resumeStream()`, which consumes it into `chat.messages` like any AI SDK stream.
 * `chat.stop()` aborts the signal given to `open`, which ends that request.
 */
export class TurnStreamTransport extends DefaultChatTransport<ChatUIMessage> {
  private nextStream: OpenTurnStream | null = null;

  constructor() {
    // Attaching replays a running turn from its start (resumeStreamIsReplay).
    super({ resumeStreamIsReplay: true });
  }

  /** The stream the next `chat.resumeStream()` consumes. */
  handOff(open: OpenTurnStream): void {
    this.nextStream = open;
  }

  override async sendMessages(): Promise<ReadableStream<UIMessageChunk>> {
    throw new Error('Turns are sent by useLiveTurn, which decides between streaming and queueing.');
  }

  override async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const open = this.nextStream;
    this.nextStream = null;
    if (!open) return null;
    const response = await open(options.abortSignal ?? new AbortController().signal);
    // 204: the turn finished before we attached; the caller refetches the transcript.
    if (response.status === 204 || !response.body) return null;
    if (!response.ok) throw await ApiRequestError.fromResponse(response);
    return this.processResponseStream(response.body);
  }
}
