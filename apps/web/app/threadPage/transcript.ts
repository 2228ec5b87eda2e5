import type { MessageFeedback } from '@chat/contracts';
import type { ChatUIMessage } from '../utils/chatMessages';
import { rollSteers } from '../utils/steerRoll';
import type { LiveReply, Transcript } from './state';

/**
 * The transcript's rules, as pure functions of the `Transcript` value. The reply streaming now
 * lives apart from the other messages (`live`), so a delta touches one message; the rules that
 * look for a turn's messages look from the end, where a turn being settled or continued is.
 */

/** Puts the streamed reply after the other messages: the stream is over. */
export function endLive(transcript: Transcript): Transcript {
  const { live } = transcript;
  if (!live) return transcript;
  return { messages: live.reply ? [...transcript.messages, live.reply] : transcript.messages, live: null };
}

/** The latest chunks of the live reply. An attach that replays a reply the transcript already holds takes it over. */
export function updateLive(transcript: Transcript, message: ChatUIMessage): Transcript {
  const { live } = transcript;
  if (!live) return transcript;
  let { messages } = transcript;
  if (live.reply === null && messages.at(-1)?.id === message.id) messages = messages.slice(0, -1);
  return { messages, live: { ...live, reply: message } };
}

/**
 * Starts showing a turn's reply. A continued reply (after an approval) or an attach to a turn
 * that waited for one goes on in the message holding its tool call: what came after that message
 * (a copy of the continuation a read already brought) goes, and that message becomes the live one.
 */
export function openLive(
  transcript: Transcript,
  live: Pick<LiveReply, 'turnId' | 'origin'>,
  toolCallIds: readonly string[],
): Transcript {
  let messages = transcript.messages;
  let reply: ChatUIMessage | null = null;
  if (live.origin !== 'own' && toolCallIds.length > 0) {
    const index = messages.findLastIndex((message) =>
      message.parts.some((part) => 'toolCallId' in part && toolCallIds.includes(part.toolCallId as string)),
    );
    if (index >= 0) {
      reply = messages[index] ?? null;
      messages = messages.slice(0, index);
    }
  }
  return { messages, live: { ...live, reply } };
}

/** Appends messages after the others (a turn's user message as it starts). */
export function appendMessages(transcript: Transcript, added: readonly ChatUIMessage[]): Transcript {
  if (added.length === 0) return transcript;
  return { ...transcript, messages: [...transcript.messages, ...added] };
}

/**
 * Puts a settled turn's final messages (from its `turn.settled` event) in place of this tab's copy
 * of the turn: its optimistic user message and its streamed reply, at the end of the transcript.
 * Null when it cannot: a reply is streaming, or the transcript does not end with that turn (the
 * caller reads the detail instead).
 */
export function applyTurnMessages(
  transcript: Transcript,
  turnId: string,
  final: readonly ChatUIMessage[],
  streamedReplyId: string | undefined,
): Transcript | null {
  if (transcript.live !== null || final.length === 0) return null;
  const { messages } = transcript;
  const ids = new Set(final.map((message) => message.id));
  const ofTurn = (message: ChatUIMessage) =>
    ids.has(message.id) || message.metadata?.turnId === turnId || message.id === streamedReplyId;
  let start = messages.length;
  while (start > 0 && ofTurn(messages[start - 1] as ChatUIMessage)) start--;
  if (start === messages.length) return null;
  return { messages: [...messages.slice(0, start), ...final], live: null };
}

/** Shows a turn's reply as interrupted before the server's transcript says so too (S2). */
export function markInterrupted(
  transcript: Transcript,
  turnId: string,
  streamedReplyId: string | undefined,
): Transcript {
  const { messages } = transcript;
  const index = messages.findLastIndex(
    (message) =>
      message.role === 'assistant' && (message.metadata?.turnId === turnId || message.id === streamedReplyId),
  );
  const reply = messages[index];
  if (!reply || reply.metadata?.interrupted) return transcript;
  return { ...transcript, messages: messages.with(index, interrupted(reply)) };
}

function interrupted(message: ChatUIMessage): ChatUIMessage {
  return { ...message, metadata: { ...message.metadata, interrupted: true } };
}

/** A reply's feedback (H2) as this tab or another one just set it; `null` clears it. */
export function setFeedback(
  transcript: Transcript,
  messageId: string,
  feedback: MessageFeedback | null,
): Transcript {
  const index = transcript.messages.findLastIndex((message) => message.id === messageId);
  const message = transcript.messages[index];
  if (!message) return transcript;
  const { feedback: _previous, ...metadata } = message.metadata ?? {};
  const changed = { ...message, metadata: feedback ? { ...metadata, feedback } : metadata };
  return { ...transcript, messages: transcript.messages.with(index, changed) };
}

/** Takes a turn's messages out (a failed attempt that is being retried, Q11). */
export function removeTurnMessages(transcript: Transcript, turnId: string): Transcript {
  const messages = transcript.messages.filter((message) => message.metadata?.turnId !== turnId);
  return messages.length === transcript.messages.length ? transcript : { ...transcript, messages };
}

/** The live reply as it is shown: a reply that took steers rolls into reply, steers, continuation. */
export function liveMessages(transcript: Transcript): ChatUIMessage[] {
  const reply = transcript.live?.reply;
  return reply ? rollSteers([reply]) : [];
}

/**
 * The latest `size` messages of the transcript as shown (the live reply rolled), and how many
 * earlier ones are not. Costs the window, not the transcript.
 */
export function windowOf(
  transcript: Transcript,
  size: number,
): { shown: ChatUIMessage[]; hiddenCount: number } {
  const live = liveMessages(transcript);
  const { messages } = transcript;
  const fromMessages = Math.max(0, Math.min(messages.length, size - live.length));
  return {
    shown: [...messages.slice(messages.length - fromMessages), ...live],
    hiddenCount: messages.length - fromMessages,
  };
}

/** How many messages the transcript shows in all (the live reply counted as one). */
export function messageCount(transcript: Transcript): number {
  return transcript.messages.length + (transcript.live?.reply ? 1 : 0);
}

/** The latest reply (the live one while it streams). */
export function latestReply(transcript: Transcript): ChatUIMessage | undefined {
  return transcript.live?.reply ?? transcript.messages.findLast((message) => message.role === 'assistant');
}

/** The first sentence of a finished reply, for the live region and a notification (never the whole reply). */
export function firstSentence(text: string, limit = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end >= 0 ? flat.slice(0, end + 1) : flat;
  return sentence.length > limit ? `${sentence.slice(0, limit - 1).trimEnd()}…` : sentence;
}
