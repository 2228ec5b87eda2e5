import { useChat } from '@ai-sdk/vue';
import type { MessageFeedback } from '@chat/contracts';
import type { ChatUIMessage } from '~/utils/chatMessages';
import { type OpenTurnStream, TurnStreamTransport } from '~/utils/turnStreamTransport';

/**
 * The transcript (the active version's messages) and the one turn stream this tab consumes
 * into it at a time, on top of `@ai-sdk/vue`'s chat (see TurnStreamTransport for why streams
 * are handed in rather than requested through `sendMessage`).
 */
export function useTranscript(threadId: string) {
  const transport = new TurnStreamTransport();
  const chat = useChat<ChatUIMessage>({ id: threadId, transport, throttle: 40 });
  /** The turn whose stream is being consumed now, if any. */
  const streamingTurnId = ref<string | null>(null);
  /** The turn whose stream last ended in an error (the error chunk's text is `error`). */
  const failedTurnId = ref<string | null>(null);
  /** Assistant message id each streamed turn produced, to mark it interrupted later. */
  const replyIdByTurn = new Map<string, string>();

  /**
   * Consumes one turn's stream into `messages`. Resolves when it ends: finished,
   * failed (then `error` is set) or stopped. Starting another stream ends this one.
   */
  async function consume(turnId: string, open: OpenTurnStream): Promise<void> {
    streamingTurnId.value = turnId;
    const known = new Set(chat.messages.value.map((message) => message.id));
    transport.handOff(open);
    try {
      await chat.resumeStream();
    } finally {
      const reply = chat.messages.value.findLast((message) => message.role === 'assistant');
      if (reply && !known.has(reply.id)) replyIdByTurn.set(turnId, reply.id);
      if (streamingTurnId.value === turnId) streamingTurnId.value = null;
    }
    failedTurnId.value = chat.status.value === 'error' ? turnId : null;
  }

  /** The assistant reply of `turnId` in the transcript, if this tab can tell which one it is. */
  function replyOf(turnId: string): ChatUIMessage | undefined {
    const knownId = replyIdByTurn.get(turnId);
    return chat.messages.value.find(
      (message) =>
        message.role === 'assistant' && (message.metadata?.turnId === turnId || message.id === knownId),
    );
  }

  /** Shows a reply as interrupted before the refetched transcript says so too (S2). */
  function markInterrupted(turnId: string): void {
    const reply = replyOf(turnId);
    if (!reply || reply.metadata?.interrupted) return;
    chat.messages.value = chat.messages.value.map((message) =>
      message === reply ? { ...message, metadata: { ...message.metadata, interrupted: true } } : message,
    );
  }

  /** Shows a reply's feedback (H2) as this tab or another one just set it; `null` clears it. */
  function setFeedback(messageId: string, feedback: MessageFeedback | null): void {
    chat.messages.value = chat.messages.value.map((message) => {
      if (message.id !== messageId) return message;
      const { feedback: _previous, ...metadata } = message.metadata ?? {};
      return { ...message, metadata: feedback ? { ...metadata, feedback } : metadata };
    });
  }

  /** Takes a turn's messages out (a failed attempt that is being retried, Q11). */
  function removeTurn(turnId: string): void {
    chat.messages.value = chat.messages.value.filter((message) => message.metadata?.turnId !== turnId);
  }

  function setMessages(messages: ChatUIMessage[]): void {
    chat.messages.value = messages;
  }

  /**
   * Keeps the transcript up to the message holding one of `toolCallIds`: a stream that continues
   * a reply after an approval decision appends to that message (the AI SDK continues the last
   * assistant message), so a copy of the continuation a refetch already brought must go first.
   */
  function cutAfterToolCall(toolCallIds: readonly string[]): void {
    const messages = chat.messages.value;
    const index = messages.findLastIndex((message) =>
      message.parts.some((part) => 'toolCallId' in part && toolCallIds.includes(part.toolCallId)),
    );
    if (index >= 0 && index < messages.length - 1) chat.messages.value = messages.slice(0, index + 1);
  }

  /**
   * Puts a settled turn's final messages (from its `turn.settled` event) in place of this tab's
   * copy of the turn: its optimistic user message and streamed reply, at the end of the
   * transcript. False when it cannot: a stream is being shown, or the transcript does not end
   * with that turn (then the caller reads the detail).
   */
  function applyTurnMessages(turnId: string, messages: ChatUIMessage[]): boolean {
    if (streamingTurnId.value !== null || messages.length === 0) return false;
    const current = chat.messages.value;
    const ids = new Set(messages.map((message) => message.id));
    const streamedReply = replyIdByTurn.get(turnId);
    const ofTurn = (message: ChatUIMessage) =>
      ids.has(message.id) || message.metadata?.turnId === turnId || message.id === streamedReply;
    const start = current.findIndex(ofTurn);
    if (start < 0 || !current.slice(start).every(ofTurn)) return false;
    chat.messages.value = [...current.slice(0, start), ...messages];
    return true;
  }

  function appendMessage(message: ChatUIMessage): void {
    chat.messages.value = [...chat.messages.value, message];
  }

  return {
    messages: chat.messages,
    status: chat.status,
    error: chat.error,
    clearError: chat.clearError,
    streamingTurnId: readonly(streamingTurnId),
    failedTurnId: readonly(failedTurnId),
    consume,
    stop: chat.stop,
    markInterrupted,
    setFeedback,
    removeTurn,
    setMessages,
    applyTurnMessages,
    appendMessage,
    cutAfterToolCall,
  };
}
