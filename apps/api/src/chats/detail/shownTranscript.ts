import type { ChatMessage, ChatMessageMetadata, MessageVersion } from '@chat/contracts';
import type { BranchRow, Queryable, ThreadRow } from '@chat/db';
import { InvariantError } from '../../platform/errors';
import { userMessagesWithParents, versionsFromLineage } from '../branches/lineage';
import { listSiblingRows } from '../branches/lineageRepository';
import { findThreadBranch } from '../branches/repository';
import { carriesApproval, noApproval, toChatMessages, visibleParts } from '../branches/transcript';
import { transcriptTables } from '../transcript/tables';
import type { MarkedMessage, StoredMessage } from '../transcript/transcriptStore';
import { listTurnMarksOfMessages, type TurnMarkRow, turnRowsMark } from '../turns/repository';
import { type ShownMessage, shownMessageBytes, type TranscriptCache } from './transcriptCache';

/**
 * The active branch as a thread detail shows it (ADR-051): its messages converted once and kept
 * in the process's TranscriptCache, so a detail of a long chat reads and converts only what came
 * after the cached prefix. The prefix is used only when the database, in the detail's own
 * snapshot, still counts and marks its rows exactly as cached (`readMarkedMessagesAfter`); on any
 * doubt the whole branch is read again, as without the cache.
 */
export interface ShownTranscript {
  branch: BranchRow;
  /** Every stored message of the branch, oldest first. */
  messages: readonly ShownMessage[];
  versions: Map<string, MessageVersion>;
  /** The transcript's user messages with their parents, by origin id (its lineage rows). */
  userMessages: Array<{ messageId: string; parentId: string; createdAt: Date }>;
  /** The messages' count and the sum of their row marks: names this exact transcript. */
  mark: string;
  /**
   * The stored messages, when they convert as a whole only (a store's signal folds into its
   * neighbour, or a conversion changed an id): then nothing of the branch is cached.
   */
  whole?: StoredMessage[];
}

export async function readShownTranscript(
  q: Queryable,
  thread: ThreadRow,
  cache: TranscriptCache,
): Promise<ShownTranscript> {
  const activeBranchId = thread.activeBranchId;
  if (!activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
  const entry = cache.get(activeBranchId);
  const last = entry?.messages.at(-1);
  // With a cached prefix, its check and what came after it are read beside the branch row.
  const [branch, afterPrefix] = await Promise.all([
    findThreadBranch(q, thread.id, activeBranchId),
    entry && last
      ? transcriptTables.readMarkedMessagesAfter(
          q,
          { id: entry.branchId, memoryThreadId: entry.memoryThreadId },
          last.storedId,
        )
      : undefined,
  ]);
  if (!branch) throw new InvariantError(`thread ${thread.id} has no active branch`);

  let messages: ShownMessage[] | undefined;
  let whole: StoredMessage[] | undefined;
  if (entry && afterPrefix) {
    const { after, prefix } = afterPrefix;
    const unchanged =
      entry.memoryThreadId === branch.memoryThreadId &&
      prefix.messages === entry.messages.length &&
      prefix.marks === entry.marks;
    const tail = unchanged ? shownMessages(after) : undefined;
    if (tail) messages = entry.messages.concat(tail);
    else cache.delete(activeBranchId);
  }
  if (!messages) {
    const marked = await transcriptTables.readMarkedBranchMessages(q, branch);
    messages = shownMessages(marked);
    if (!messages) {
      whole = marked.map(({ message }) => message);
      messages = marked.map((message) => toShownMessage(message, undefined));
    }
  }
  if (!whole) keepPrefix(cache, branch, messages);

  const userMessages = userMessagesWithParents(
    messages
      .filter((message) => message.role !== 'system')
      .map((message) => ({ originId: message.originId, role: message.role, createdAt: message.createdAt })),
  );
  const others = await listSiblingRows(q, thread.id, branch.id, userMessages);
  const versions = versionsFromLineage(
    { branchId: branch.id, lastActiveAt: branch.lastActiveAt },
    userMessages,
    others,
  );
  let marks = 0n;
  for (const message of messages) marks += message.mark;
  return {
    branch,
    messages,
    versions,
    userMessages,
    mark: `${messages.length}:${marks}`,
    ...(whole ? { whole } : {}),
  };
}

/**
 * The marks of the shown messages' turns (turns/marks.ts), from the rows the cache holds for this
 * very transcript while the thread's turn rows are unchanged (`turnRowsMark`), else read.
 */
export async function readShownTurnRows(
  q: Queryable,
  threadId: string,
  transcript: ShownTranscript,
  cache: TranscriptCache,
): Promise<readonly TurnMarkRow[]> {
  const shownIds = transcript.messages.map((message) => message.originId);
  if (transcript.whole) return await listTurnMarksOfMessages(q, threadId, shownIds);
  const turns = await turnRowsMark(q, threadId);
  const entry = cache.get(transcript.branch.id, transcript.branch.memoryThreadId);
  const cached = entry?.turnMarks;
  if (cached && cached.transcript === transcript.mark && cached.turns === turns) return cached.rows;
  const rows = await listTurnMarksOfMessages(q, threadId, shownIds);
  // Read in the same snapshot as the turns' mark: the pair is one moment.
  if (entry) entry.turnMarks = { transcript: transcript.mark, turns, rows };
  return rows;
}

/** The shown transcript as the detail's messages, with each one's metadata from the API's records. */
export function toShownChatMessages(
  transcript: ShownTranscript,
  options: {
    metadataOf: (id: string) => ChatMessageMetadata;
    approvalIdOf?: (toolCallId: string) => string | undefined;
  },
): ChatMessage[] {
  if (transcript.whole) {
    const origins = new Map(transcript.messages.map((message) => [message.storedId, message.originId]));
    return toChatMessages(transcript.whole, { ...options, idOf: (id) => origins.get(id) ?? id });
  }
  const approvalIdOf = options.approvalIdOf ?? noApproval;
  const converted: ChatMessage[] = [];
  for (const message of transcript.messages) {
    const { view } = message;
    if (!view) continue;
    converted.push({
      id: message.originId,
      role: view.role,
      parts: view.approvals ? visibleParts(view.parts, approvalIdOf) : view.parts,
      metadata: { createdAt: view.createdAt, ...options.metadataOf(message.originId) },
    });
  }
  return converted;
}

/**
 * Each message converted on its own, as `toChatMessages` converts a transcript without signals;
 * undefined when one of them needs the whole transcript to convert.
 */
function shownMessages(marked: readonly MarkedMessage[]): ShownMessage[] | undefined {
  const shown: ShownMessage[] = [];
  for (const message of marked) {
    if (message.message.role === 'signal') return undefined;
    const [ui, ...more] = transcriptTables.toUIMessages([message.message]);
    if (more.length > 0 || (ui && ui.id !== message.message.id)) return undefined;
    shown.push(toShownMessage(message, ui));
  }
  return shown;
}

function toShownMessage(
  { message, originId, mark, bytes }: MarkedMessage,
  ui: { role: string; parts: readonly unknown[] } | undefined,
): ShownMessage {
  const shows = ui && (ui.role === 'user' || ui.role === 'assistant');
  const approvals = shows ? carriesApproval(ui.parts) : false;
  return {
    storedId: message.id,
    originId,
    role: message.role,
    createdAt: message.createdAt,
    mark,
    bytes: shownMessageBytes(bytes),
    ...(shows
      ? {
          view: {
            role: ui.role as 'user' | 'assistant',
            createdAt: message.createdAt.toISOString(),
            // With approvals, the parts as converted: their ids are put on per detail.
            parts: approvals ? (ui.parts as ChatMessage['parts']) : visibleParts(ui.parts, noApproval),
            approvals,
          },
        }
      : {}),
  };
}

/**
 * Caches the branch's messages before its latest user message: the latest turn's messages are
 * the ones still being written (a reply streams and is checkpointed, a settle repairs it, a
 * failed attempt or the latest turn is deleted), so they are read with every detail.
 */
function keepPrefix(cache: TranscriptCache, branch: BranchRow, messages: readonly ShownMessage[]): void {
  const end = messages.findLastIndex((message) => message.role === 'user');
  const entry = cache.get(branch.id, branch.memoryThreadId);
  if (end <= 0 || (entry && entry.messages.length >= end)) return;
  const prefix = messages.slice(0, end);
  let marks = 0n;
  let bytes = 0;
  for (const message of prefix) {
    marks += message.mark;
    bytes += message.bytes;
  }
  cache.set({ branchId: branch.id, memoryThreadId: branch.memoryThreadId, messages: prefix, marks, bytes });
}
