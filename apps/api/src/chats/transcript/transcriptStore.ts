import type { Queryable } from '@chat/db';

/**
 * The transcript store: what the chat domain needs of a conversation's messages, in its own terms.
 * Each branch (version) of a chat is one conversation of the store, named by the branch's
 * `memoryThreadId`; the store keeps its messages, in one stored shape (`format: 2`: text, file
 * references, tool invocations with their results, step starts) that every runtime driver reads
 * and writes. The host never learns which framework holds them: its one implementation is on
 * Mastra memory (mastra/), whose tables and message format stay Mastra's.
 *
 * It comes in two halves, because they reach the database differently:
 * - `TranscriptTables`: statements run on the caller's connection or transaction (`q`), so a change
 *   that also writes the API's own rows (a new version, an import, a settled turn) commits whole or
 *   not at all; and the conversions between the stored shape and what a browser or an export reads.
 *   They hold no state, so there is one of them (`transcriptTables`, tables.ts).
 * - `TranscriptStore`: writes and reads through the store's own connections (the ones the runtime
 *   driver's framework writes through too), made once at start with the store (runtime.ts).
 */

/** One part of a stored message (text, a file reference, a tool invocation, a step start, ...). */
export interface StoredPart {
  type: string;
  [key: string]: unknown;
}

/** A stored message's content: its parts, and whatever else the stored shape carries. */
export interface StoredContent {
  format: 2;
  parts: StoredPart[];
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A message as the store holds it. */
export interface StoredMessage {
  id: string;
  /** A `signal` is the store's own note between messages (a reminder); a browser never sees one. */
  role: 'user' | 'assistant' | 'system' | 'signal';
  createdAt: Date;
  content: StoredContent;
  /** The conversation (a branch's `memoryThreadId`) it belongs to. */
  threadId?: string;
  /** Whose conversation it is (the owner's user id). */
  resourceId?: string;
  /** The stored shape's version, when it is not the current one. */
  type?: string;
}

/** A tool call as a stored `tool-invocation` part holds it. */
export interface StoredToolInvocation {
  state: string;
  toolCallId: string;
  toolName?: string;
  args?: unknown;
  result?: unknown;
  approval?: { id: string; approved: boolean; reason?: string };
  [key: string]: unknown;
}

/** The tool call a part holds, when it is a `tool-invocation`. */
export function toolInvocationOf(part: StoredPart): StoredToolInvocation | undefined {
  return part.type === 'tool-invocation' ? (part.toolInvocation as StoredToolInvocation) : undefined;
}

/** A message of a new chat, to write as it is (`content` is the JSON of a `StoredContent`). */
export interface NewStoredMessage {
  id: string;
  threadId: string;
  resourceId: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: Date;
}

/** A stored message converted to an AI SDK UI message, before the API puts its ids and metadata on it. */
export interface UIMessageLike {
  id: string;
  role: string;
  parts: readonly unknown[];
}

/** A UI message to store (an import's): its parts are AI SDK UI message parts. */
export interface UIMessageToStore {
  id: string;
  role: 'user' | 'assistant';
  createdAt: Date;
  parts: readonly StoredPart[];
}

/**
 * The part of a branch the model sees whole (C2, C3): its messages from the branch's context
 * marker on (`start`: the first message's stored id and time; the time holds when that message was
 * deleted since), or all of them without a marker. Token counts are the API's
 * (`message_token_counts`, by origin id), for `encoding`.
 */
/** What the model's window holds: its messages, their counted tokens, and those not counted yet. */
export interface ModelWindowTally {
  messages: number;
  tokens: number;
  uncounted: Array<{ originId: string; content: StoredContent }>;
}

export interface ModelWindowScope {
  threadId: string;
  branch: { id: string; memoryThreadId: string };
  start: { messageId: string; at: Date } | null;
  encoding: string;
}

/** One message of the model's window, with its token count (0 when it has none yet). */
export interface WindowMessage {
  id: string;
  role: string;
  createdAt: Date;
  tokens: number;
  content: StoredContent;
}

/** A stored message of a branch with what a cache of the branch keeps of its row (ADR-051). */
export interface MarkedMessage {
  message: StoredMessage;
  /** The id the person sees: its origin's when it is a copy (message_origins), its own otherwise. */
  originId: string;
  /** Changes whenever the stored row does (any write, by any process): see readMarkedMessagesAfter. */
  mark: bigint;
  /** The stored content's length: what the message weighs in a cache. */
  bytes: number;
}

/** Statements on the caller's connection or transaction, and the stored shape's conversions. */
export interface TranscriptTables {
  /** Every message of a branch, oldest first (the order the store's own recall gives). */
  readBranchMessages(q: Queryable, memoryThreadId: string): Promise<StoredMessage[]>;
  /** The newest `limit` messages of a branch (no system messages), oldest first: a run's window. */
  readNewestMessages(q: Queryable, memoryThreadId: string, limit: number): Promise<StoredMessage[]>;
  /** Every message of a branch, oldest first, with its origin and row version mark (ADR-051). */
  readMarkedBranchMessages(
    q: Queryable,
    branch: { id: string; memoryThreadId: string },
  ): Promise<MarkedMessage[]>;
  /**
   * The messages of a branch after its stored message `afterId` (none when that one is gone), with
   * the count and the sum of the row version marks of the messages up to it, included.
   */
  readMarkedMessagesAfter(
    q: Queryable,
    branch: { id: string; memoryThreadId: string },
    afterId: string,
  ): Promise<{ after: MarkedMessage[]; prefix: { messages: number; marks: bigint } }>;
  /** A stored message and every message after it, oldest first (empty when it is not the branch's). */
  readMessagesFrom(q: Queryable, memoryThreadId: string, messageId: string): Promise<StoredMessage[]>;
  /**
   * The ids and roles of a branch's messages from `fromMessageId` on (included), oldest first, and
   * whether a message of its own (not a copy of its parent's) comes before it.
   */
  readBranchTail(
    q: Queryable,
    branch: { id: string; memoryThreadId: string },
    fromMessageId: string,
  ): Promise<{ tail: Array<{ id: string; role: string }>; ownMessageBefore: boolean }>;
  /** The ids of a branch's messages before `messageId` (a stored id), oldest first. */
  readMessageIdsBefore(q: Queryable, memoryThreadId: string, messageId: string): Promise<string[]>;
  /** The last user message before `messageId` (a stored id) in a branch. */
  readUserMessageBefore(
    q: Queryable,
    memoryThreadId: string,
    messageId: string,
  ): Promise<StoredMessage | undefined>;
  /** A stored message's role, when `messageId` is one of the branch's. */
  readMessageRole(q: Queryable, memoryThreadId: string, messageId: string): Promise<string | undefined>;

  /**
   * How many messages the model's window holds, their tokens (uncounted ones add 0), and the ones
   * with no count yet, with their content: read at one moment.
   */
  tallyModelWindow(q: Queryable, scope: ModelWindowScope): Promise<ModelWindowTally>;
  /** The window's messages, oldest first, with their counts and content (what a compaction splits). */
  readModelWindow(q: Queryable, scope: ModelWindowScope): Promise<WindowMessage[]>;

  /** New, empty conversations (one per branch) of `resourceId`. */
  insertConversations(q: Queryable, memoryThreadIds: string[], resourceId: string): Promise<void>;
  /** A new chat's messages, written as they are. */
  insertMessages(q: Queryable, messages: readonly NewStoredMessage[]): Promise<void>;
  /**
   * A new conversation `to` holding a copy of the messages `messageIds` of `from` (each copy a new
   * id, with the same content, time and role). Returns each copy's id by the copied message's id;
   * throws when one is not `from`'s.
   */
  copyMessages(
    q: Queryable,
    copy: { from: string; to: string; resourceId: string; messageIds: readonly string[] },
  ): Promise<Map<string, string>>;
  /** Messages deleted by id. */
  deleteMessages(q: Queryable, messageIds: readonly string[]): Promise<void>;
  /**
   * Messages written by id into a conversation, as `TranscriptStore.saveMessages` writes them (an
   * upsert; the conversation made first when missing), on the caller's connection or transaction.
   */
  saveMessages(
    q: Queryable,
    conversation: { memoryThreadId: string; resourceId: string },
    messages: readonly StoredMessage[],
  ): Promise<void>;

  /** The lineage rows of every user message of a branch, from its stored order (a new branch's). */
  writeBranchLineage(q: Queryable, branchId: string): Promise<void>;
  /** The lineage row of one stored user message of a branch (nothing when it is not stored). */
  writeUserMessageLineage(q: Queryable, branchId: string, messageId: string): Promise<void>;
  /** Deletes the lineage rows of `messageIds` (origin ids) whose message is really gone from the branch. */
  deleteLineageOfGoneMessages(q: Queryable, branchId: string, messageIds: string[]): Promise<void>;
  /** The branch's last message becomes a fork of its thread (a new version's, a deleted turn's). */
  markBranchTailFork(q: Queryable, branchId: string): Promise<void>;
  /** Every fork of a thread written whole (an import), from its lineage rows and branches. */
  markThreadForks(q: Queryable, threadId: string): Promise<void>;

  /** Every stored row of user `from` becomes `to`'s. Running it again moves nothing more. */
  moveRowsOfUser(q: Queryable, from: string, to: string): Promise<void>;
  /** Deletes every stored row of a user: theirs, and those of the conversations of their branches. */
  deleteRowsOfUser(q: Queryable, userId: string, memoryThreadIds: string[]): Promise<void>;

  /** Stored messages as AI SDK UI messages (what thread detail and an export show), in linear time. */
  toUIMessages(stored: readonly StoredMessage[]): UIMessageLike[];
  /** The stored content (as JSON) the store itself would write for a UI message. */
  storedContentOf(message: UIMessageToStore): string;
}

/** Reads and writes through the store's own connections. */
export interface TranscriptStore {
  /** Every message of a branch, oldest first, as the store's own recall gives them ([] when it has none). */
  recall(memoryThreadId: string): Promise<StoredMessage[]>;
  /** Stored messages by id (in any conversation). */
  readMessagesById(messageIds: readonly string[]): Promise<StoredMessage[]>;
  /**
   * Writes messages by id into a conversation (an upsert: a message already stored is replaced),
   * making the conversation (empty) first when it does not exist yet.
   */
  saveMessages(
    conversation: { memoryThreadId: string; resourceId: string },
    messages: readonly StoredMessage[],
  ): Promise<void>;
  /** Replaces one stored message's content. */
  updateMessageContent(messageId: string, content: StoredContent): Promise<void>;
  /** Deletes messages by id. */
  deleteMessages(messageIds: readonly string[]): Promise<void>;
  /** Deletes a conversation and its messages. */
  deleteConversation(memoryThreadId: string): Promise<void>;
}
