import type { ChatMessage } from '@chat/contracts';
import type { StoredMessage } from '../transcript/transcriptStore';
import type { TurnMarkRow } from '../turns/repository';

/**
 * A thread detail's per-process cache of each branch's shown messages, already converted (ADR-051).
 * It never decides what is true: every entry is checked against the database in the reading
 * snapshot before it is used (the count and sum of the row version marks of the cached prefix,
 * shownTranscript.ts), and any difference drops it. So a change made by any process, by any path
 * (a settle's repair, a version's copy, an import, an account move, a deletion) costs a full read,
 * never a stale answer. Bounded by an estimate of the bytes it holds, least recently used out first.
 */

/** One stored message of a branch, as a detail shows it (before its marks and feedback). */
export interface ShownMessage {
  storedId: string;
  /** The id the person sees (its origin's when it is a copy). */
  originId: string;
  role: StoredMessage['role'];
  createdAt: Date;
  /** The stored row's version mark (memoryTables.ts): changes with any write of the row. */
  mark: bigint;
  /** What a browser gets of it, without metadata; absent when it shows nothing (a reminder). */
  view?: {
    role: 'user' | 'assistant';
    /** `createdAt` as the answer writes it. */
    createdAt: string;
    parts: ChatMessage['parts'];
    /** Whether a part carries an approval, whose id is the API's request's (read per detail). */
    approvals: boolean;
  };
  /** An estimate of what it weighs in memory. */
  bytes: number;
}

/** The cached prefix of one branch: its messages before its latest user message. */
export interface TranscriptEntry {
  branchId: string;
  memoryThreadId: string;
  messages: readonly ShownMessage[];
  /** The sum of `messages`' marks: with their count, what the database must still say. */
  marks: bigint;
  bytes: number;
  /**
   * The turn rows the marks of one whole transcript were read from: valid for that transcript
   * (`transcript`, its messages' count and marks) while the thread's turn rows are as they were
   * (`turns`, turnRowsMark).
   */
  turnMarks?: { transcript: string; turns: string; rows: readonly TurnMarkRow[] };
}

/** What one cached message costs beyond its stored content's length (objects, ids, the Date). */
const MESSAGE_OVERHEAD_BYTES = 400;

/** The default budget of one process: a few dozen long chats (a 2,000-message one is ~3 MB). */
export const DEFAULT_TRANSCRIPT_CACHE_BYTES = 64 * 1024 * 1024;

export function shownMessageBytes(contentLength: number): number {
  // A stored text comes back as parsed parts and their copy for the browser: twice, two bytes a
  // character at worst.
  return MESSAGE_OVERHEAD_BYTES + contentLength * 4;
}

export class TranscriptCache {
  private readonly entries = new Map<string, TranscriptEntry>();
  private held = 0;

  constructor(private readonly maxBytes = DEFAULT_TRANSCRIPT_CACHE_BYTES) {}

  /** The entry of a branch, when it has one for this memory thread; now the most recently used. */
  get(branchId: string, memoryThreadId?: string): TranscriptEntry | undefined {
    const entry = this.entries.get(branchId);
    if (!entry) return undefined;
    if (memoryThreadId !== undefined && entry.memoryThreadId !== memoryThreadId) {
      this.delete(branchId);
      return undefined;
    }
    this.entries.delete(branchId);
    this.entries.set(branchId, entry);
    return entry;
  }

  /** Keeps `entry` (replacing the branch's), dropping the least recently used past the budget. */
  set(entry: TranscriptEntry): void {
    this.delete(entry.branchId);
    if (entry.bytes > this.maxBytes || entry.messages.length === 0) return;
    this.entries.set(entry.branchId, entry);
    this.held += entry.bytes;
    for (const [branchId] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.delete(branchId);
    }
  }

  delete(branchId: string): void {
    const entry = this.entries.get(branchId);
    if (!entry) return;
    this.entries.delete(branchId);
    this.held -= entry.bytes;
  }

  /** What the cache holds now, by its estimate. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }
}
