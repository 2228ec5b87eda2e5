import { setTimeout as sleep } from 'node:timers/promises';
import type { Attachment, ChatMessage, ChatMessageMetadata } from '@chat/contracts';
import type { Queryable } from '@chat/db';
import { storedFileReferencePart, visibleFilePart } from '../attachments/parts';
import { transcriptTables } from '../transcript/tables';
import {
  type StoredContent,
  type StoredMessage,
  type TranscriptStore,
  toolInvocationOf,
} from '../transcript/transcriptStore';

/**
 * Reading and repairing a branch's executed transcript in the transcript store (the canonical
 * store, O1).
 */

/**
 * Converts stored messages to AI SDK UIMessages with the ids the person sees (`idOf`) and metadata
 * from the API's own records, in linear time (the store's `toUIMessages`).
 */
export function toChatMessages(
  messages: StoredMessage[],
  options: {
    idOf: (messageId: string) => string;
    metadataOf: (id: string) => ChatMessageMetadata;
    /** The API's approval request of a tool call, when it has one. */
    approvalIdOf?: (toolCallId: string) => string | undefined;
  },
): ChatMessage[] {
  // One pass and one object per message and part where possible: a thread detail converts every
  // shown message (thousands in a long chat), so what each one allocates is the detail's cost.
  const createdAtOf = new Map<string, Date>();
  for (const message of messages) createdAtOf.set(message.id, message.createdAt);
  const approvalIdOf = options.approvalIdOf ?? noApproval;
  const converted: ChatMessage[] = [];
  for (const message of transcriptTables.toUIMessages(messages)) {
    if (message.role !== 'user' && message.role !== 'assistant') continue;
    const id = options.idOf(message.id);
    const createdAt = createdAtOf.get(message.id)?.toISOString();
    const metadata: ChatMessageMetadata = createdAt
      ? { createdAt, ...options.metadataOf(id) }
      : { ...options.metadataOf(id) };
    converted.push({ id, role: message.role, parts: visibleParts(message.parts, approvalIdOf), metadata });
  }
  return converted;
}

export const noApproval = (): string | undefined => undefined;

/** Whether a converted message's parts carry an approval (whose id is the API's request's). */
export function carriesApproval(parts: readonly unknown[]): boolean {
  return (parts as Part[]).some(
    // As visibleParts decides (a file part's url is all the part loses or gains on the way).
    (part) => part.type !== 'error' && Boolean(part.approval) && typeof part.toolCallId === 'string',
  );
}

type Part = { type: string; [key: string]: unknown };

/**
 * The parts a browser renders. Mastra keeps its own bookkeeping on parts (timestamps, provider
 * metadata) and stores model errors as parts; those stay on the server. A tool part's approval is
 * named by the API's request id, never by Mastra's run id.
 */
export function visibleParts(
  parts: readonly unknown[],
  approvalIdOf: (toolCallId: string) => string | undefined,
): ChatMessage['parts'] {
  const visible: Part[] = [];
  for (const stored of parts as Part[]) {
    if (stored.type === 'error') continue;
    // An image is a reference to the media route, never bytes.
    const part = visibleFilePart(withoutBookkeeping(stored));
    const approval = part.approval as { approved?: boolean; reason?: string } | undefined;
    if (!approval || typeof part.toolCallId !== 'string') {
      visible.push(part);
      continue;
    }
    const id = approvalIdOf(part.toolCallId) ?? part.toolCallId;
    visible.push({ ...part, approval: { ...approval, id } });
  }
  return visible as ChatMessage['parts'];
}

/** A part without Mastra's bookkeeping; copied only when it has some (a plain text part has none). */
function withoutBookkeeping(part: Part): Part {
  if (!('providerMetadata' in part) && !('createdAt' in part)) return part;
  const { providerMetadata: _providerMetadata, createdAt: _createdAt, ...bare } = part;
  return bare as Part;
}

/**
 * Closes a tool call that will never get a result (its turn was stopped while it waited for an
 * approval): the call is stored as declined with `reason`, so the card shows its end and the next
 * model call sees a complete tool exchange rather than a dangling call.
 */
export async function closeToolCall(
  transcript: TranscriptStore,
  memoryThreadId: string,
  toolCallId: string,
  reason: string,
): Promise<void> {
  const stored = await transcript.recall(memoryThreadId);
  const message = stored.findLast((candidate) =>
    candidate.content.parts.some((part) => toolInvocationOf(part)?.toolCallId === toolCallId),
  );
  if (!message) return;
  const parts = message.content.parts.map((part) => {
    const invocation = toolInvocationOf(part);
    if (invocation?.toolCallId !== toolCallId) return part;
    if (invocation.state === 'result') return part;
    const toolInvocation = {
      ...invocation,
      state: 'output-denied',
      approval: { id: toolCallId, approved: false, reason },
    };
    return { ...part, toolInvocation };
  });
  await transcript.updateMessageContent(message.id, { ...message.content, parts });
}

/** The visible text of one stored message, read by id (no recall of its thread). */
export async function readMessageText(
  transcript: TranscriptStore,
  messageId: string,
): Promise<string | undefined> {
  const [message] = await transcript.readMessagesById([messageId]);
  return message && textOf(message);
}

export function textOf(message: { content: { parts: readonly unknown[] } }): string {
  return (message.content.parts as Part[])
    .map((part) => (part.type === 'text' ? String(part.text ?? '') : ''))
    .join('')
    .trim();
}

/**
 * A turn's stored user message and every message of its branch after it, oldest first (empty when
 * the user message is not stored): the tail of the branch only, never the whole transcript, so
 * settling a turn costs the same in a long chat as in a short one.
 */
export async function messagesFromUserMessage(
  q: Queryable,
  memoryThreadId: string,
  userMessageId: string,
): Promise<StoredMessage[]> {
  // One read (the store's own API takes two: the message by id, then its thread from its time on).
  return await transcriptTables.readMessagesFrom(q, memoryThreadId, userMessageId);
}

/** A turn's messages as its runner recorded them (memory's shape), to be made sure of in memory. */
export interface TurnMessages {
  memoryThreadId: string;
  resourceId: string;
  userMessage: { id: string; text: string; createdAt: Date; attachments?: readonly Attachment[] };
  /** The replies, and the steers taken in between them, oldest first. */
  messages: ReadonlyArray<{
    id: string;
    role: 'user' | 'assistant';
    createdAt: string;
    parts: ReadonlyArray<{ type: string; [key: string]: unknown }>;
  }>;
}

/**
 * Makes sure a turn's user message and everything its runner recorded of the reply are in memory,
 * and returns the id of the reply as stored (the last message of it with something visible; null
 * when there is none). A run's own save is trusted only as far as it goes: when what is stored
 * after the user message holds all of the recorded text (a prefix of it is not enough), every
 * finished tool call and every steer taken in, nothing is written. Otherwise the turn's messages
 * become the record, written by id (an upsert: a save that lands later changes nothing), and a
 * stored reply message the record does not name goes (the record holds its content: it is what
 * streamed). Replies with nothing visible go either way. Reads the branch's tail from the user
 * message on (through `q`), never the whole transcript; writes through memory. Returns once the
 * clock has passed the newest of the turn's messages (`afterNewest`).
 */
export async function ensureTurnStored(
  transcript: TranscriptStore,
  q: Queryable,
  turn: TurnMessages,
): Promise<string | null> {
  return (await storeTurnMessages(transcript, q, turn)).replyId;
}

/** `ensureTurnStored`, also returning the messages it wrote (none when memory held them all). */
export async function storeTurnMessages(
  transcript: TranscriptStore,
  q: Queryable,
  turn: TurnMessages,
): Promise<{ replyId: string | null; written: StoredMessage[] }> {
  const stored = await messagesFromUserMessage(q, turn.memoryThreadId, turn.userMessage.id);
  const plan = planTurnMessages(turn, stored);
  // Through the store's own connections, in the order that never leaves the reply without a copy.
  if (plan.empty.length > 0) await transcript.deleteMessages(plan.empty);
  if (plan.writes.length > 0) {
    // Made first when missing (a turn whose user message is the conversation's first).
    await transcript.saveMessages(conversationOf(turn), plan.writes);
  }
  if (plan.replaced.length > 0) await transcript.deleteMessages(plan.replaced);
  await afterNewest(plan.stamps);
  return { replyId: plan.replyId, written: plan.writes };
}

/**
 * What making sure of a turn's messages takes, given what is stored from its user message on
 * (`messagesFromUserMessage`): decided without the database, so a settle can read and write in
 * its own transaction (`writeTurnMessages`).
 */
export interface TurnMessagesPlan {
  /** Stored replies with nothing visible (an abort before the first word): deleted. */
  empty: string[];
  /** The messages to write (none when memory holds them all). */
  writes: StoredMessage[];
  /** Stored replies the record does not name (the record holds their content): deleted. */
  replaced: string[];
  /** The id of the reply as stored (the last message of it with something visible), or null. */
  replyId: string | null;
  /** The times of the turn's messages: the clock passes the newest before its turn is done. */
  stamps: number[];
}

/** The plan of `storeTurnMessages`: see `ensureTurnStored`. */
export function planTurnMessages(turn: TurnMessages, stored: readonly StoredMessage[]): TurnMessagesPlan {
  const storedUser = stored[0];
  const after = stored.slice(1);
  // An abort before the first word leaves an assistant message with nothing visible in it (a
  // tool call is something: its card shows).
  const emptyMessages = after.filter((message) => message.role === 'assistant' && !hasContent(message));
  const empty = emptyMessages.map((message) => message.id);
  const kept = after.filter((message) => !emptyMessages.includes(message));
  if (storedUser && covers(kept, turn.messages)) {
    return {
      empty,
      writes: [],
      replaced: [],
      replyId: kept.findLast((message) => message.role === 'assistant')?.id ?? null,
      stamps: stampsOf(stored),
    };
  }

  const storedAt = new Map(stored.map((message) => [message.id, message.createdAt]));
  const userCreatedAt = storedUser?.createdAt ?? turn.userMessage.createdAt;
  const base = { threadId: turn.memoryThreadId, resourceId: turn.resourceId };
  const writes: StoredMessage[] = [];
  if (!storedUser) {
    writes.push({
      ...base,
      id: turn.userMessage.id,
      role: 'user',
      createdAt: turn.userMessage.createdAt,
      content: {
        format: 2,
        parts: [
          { type: 'text', text: turn.userMessage.text },
          // Its images, as references (never bytes), like the message Mastra would have saved.
          ...(turn.userMessage.attachments ?? []).map(storedFileReferencePart),
        ],
      },
    });
  }
  let previous = userCreatedAt.getTime();
  for (const message of turn.messages) {
    if (message.role === 'assistant' && !hasContent({ content: { parts: message.parts } })) continue;
    // After the message before it, whatever the clocks said: memory sorts by this time.
    const createdAt =
      storedAt.get(message.id) ?? new Date(Math.max(new Date(message.createdAt).getTime(), previous + 1));
    previous = createdAt.getTime();
    writes.push({
      ...base,
      id: message.id,
      role: message.role,
      createdAt,
      content: { format: 2, parts: [...message.parts] } as StoredContent,
    });
  }
  const named = new Set(turn.messages.map((message) => message.id));
  const replaced = kept
    .filter((message) => message.role === 'assistant' && !named.has(message.id))
    .map((message) => message.id);
  return {
    empty,
    writes,
    replaced,
    replyId: writes.findLast((message) => message.role === 'assistant')?.id ?? null,
    stamps: stampsOf([...stored, ...writes]),
  };
}

/**
 * The plan's statements on `q` (a settle's transaction), sent together: issued in this call, in
 * order, before anything the caller sends after it (statements on one connection run in the order
 * they were sent), so a statement sent next may read what they wrote.
 */
export function writeTurnMessages(
  q: Queryable,
  turn: TurnMessages,
  plan: TurnMessagesPlan,
): Promise<unknown> {
  const gone = [...plan.empty, ...plan.replaced];
  return Promise.all([
    gone.length > 0 ? transcriptTables.deleteMessages(q, gone) : undefined,
    plan.writes.length > 0 ? transcriptTables.saveMessages(q, conversationOf(turn), plan.writes) : undefined,
  ]);
}

function conversationOf(turn: TurnMessages) {
  return { memoryThreadId: turn.memoryThreadId, resourceId: turn.resourceId };
}

function stampsOf(messages: ReadonlyArray<{ createdAt: Date }>): number[] {
  return messages.map((message) => new Date(message.createdAt).getTime());
}

/**
 * Memory orders a branch by each message's `createdAt`, and the next turn's messages are stamped
 * with the time they are made: they must come after every message of this turn, which can be
 * stamped ahead of the clock (Mastra stamps messages made within one millisecond a millisecond
 * apart; a repaired reply is stamped after its user message whatever the clock says). So this
 * waits until the clock has passed the newest, usually not at all. Mastra's own save paused 10 ms
 * after every run for the same reason; that pause is patched out (ADR-032). A stamp further ahead
 * than MAX_STAMP_LEAD_MS is another clock's (a skewed instance), which waiting would not mend.
 */
export async function afterNewest(stamps: readonly number[]): Promise<void> {
  const newest = Math.min(Math.max(...stamps.filter(Number.isFinite)), Date.now() + MAX_STAMP_LEAD_MS);
  while (Date.now() <= newest) await sleep(newest + 1 - Date.now());
}

const MAX_STAMP_LEAD_MS = 250;

/**
 * Whether the stored messages after a turn's user message hold all of what was recorded: all of
 * its text (in order, whatever the split into messages), each finished tool call, each steer.
 */
function covers(stored: readonly StoredMessage[], recorded: TurnMessages['messages']): boolean {
  const storedReplies = stored.filter((message) => message.role === 'assistant');
  const storedText = squash(storedReplies.map(textOf).join(' '));
  const recordedText = squash(
    recorded
      .filter((message) => message.role === 'assistant')
      .map((message) => textOf({ content: { parts: message.parts } }))
      .join(' '),
  );
  if (!storedText.startsWith(recordedText)) return false;
  const storedIds = new Set(stored.map((message) => message.id));
  if (recorded.some((message) => message.role === 'user' && !storedIds.has(message.id))) return false;
  const finished = new Set(storedReplies.flatMap((message) => finishedToolCalls(message.content.parts)));
  return recorded.every((message) =>
    finishedToolCalls(message.parts).every((toolCallId) => finished.has(toolCallId)),
  );
}

/** The ids of the tool calls among `parts` that have an outcome (a result, or a refusal). */
function finishedToolCalls(parts: readonly unknown[]): string[] {
  return (parts as Part[]).flatMap((part) => {
    if (part.type !== 'tool-invocation') return [];
    const invocation = part.toolInvocation as { state?: string; toolCallId?: string } | undefined;
    return invocation?.toolCallId && invocation.state !== 'call' ? [invocation.toolCallId] : [];
  });
}

/** Text compared across message splits: whitespace is where messages join, so it counts once. */
function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A message with something to show: text, or a tool call (its card shows). */
function hasContent(message: { content: { parts: readonly unknown[] } }): boolean {
  return (
    textOf(message) !== '' ||
    (message.content.parts as Part[]).some((part) => part.type === 'tool-invocation')
  );
}
