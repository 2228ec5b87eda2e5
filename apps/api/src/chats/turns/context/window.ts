import type { Attachment, ContextMarker, ContextState } from '@chat/contracts';
import type { BranchRow, ContextMarkerRow, Queryable } from '@chat/db';
import { CHAT_INSTRUCTIONS } from '../../../agent/chatInstructions';
import {
  countStoredParts,
  countSystemTokens,
  IMAGE_TOKENS,
  type TokenEncoding,
} from '../../../agent/tokenCount';
import { transcriptTables } from '../../transcript/tables';
import type { ModelWindowScope } from '../../transcript/transcriptStore';
import { findLatestMarker, insertTokenCounts, originOfMessage } from './repository';

/** The configured model's window (C2) and when a turn compacts first (C3; null: compaction is off). */
export interface ContextSettings {
  /** The tokens every window is counted in (the default model's). */
  encoding: TokenEncoding;
  window: number;
  compactAt: number | null;
  /**
   * The window of a chat's model (M2), by its id (null: the default model); without it every chat
   * has `window`.
   */
  windowOf?: (model: string | null) => number;
}

/** What the next model call of a branch holds before its new message. */
export interface MeasuredWindow {
  marker: ContextMarkerRow | undefined;
  /** Stored messages after the marker: the model gets them whole. */
  messages: number;
  /** Tokens: the instructions, the marker's summary and those messages. */
  tokens: number;
}

type StoredParts = Parameters<typeof countStoredParts>[0];

/** One message's stored token count (`insertTokenCounts`). */
export type TokenCount = Parameters<typeof insertTokenCounts>[1][number];

/**
 * Measures a branch's model window (C2) from stored token counts: each message is counted once
 * and kept, by the settle of the turn that wrote it (`countsOf`, written with the settle), else
 * the first time a window holding it is measured (a message another way wrote, a settle's counts
 * rolled back); the fill is then a SQL sum over the messages after the branch's marker, so
 * measuring costs what is new, never the whole branch.
 */
export class ContextWindows {
  readonly encoding: TokenEncoding;
  /** The agent's instructions, which every call holds. */
  private readonly fixedTokens: number;

  private readonly siblings = new Map<number, ContextWindows>();

  constructor(readonly settings: ContextSettings) {
    this.encoding = settings.encoding;
    this.fixedTokens = countSystemTokens(CHAT_INSTRUCTIONS, this.encoding);
  }

  /**
   * The windows of a chat whose model is `model` (M2): the same counts (one tokenizer for every
   * model, so a stored count serves them all), measured against that model's window.
   */
  forModel(model: string | null | undefined): ContextWindows {
    const window = this.settings.windowOf?.(model ?? null) ?? this.settings.window;
    if (window === this.settings.window) return this;
    let sibling = this.siblings.get(window);
    if (!sibling) {
      sibling = new ContextWindows({ ...this.settings, window, windowOf: undefined });
      this.siblings.set(window, sibling);
    }
    return sibling;
  }

  scope(branch: BranchRow, marker: ContextMarkerRow | undefined): ModelWindowScope {
    return {
      threadId: branch.threadId,
      branch,
      start: marker ? { messageId: marker.firstMessageId, at: marker.firstMessageAt } : null,
      encoding: this.encoding,
    };
  }

  /** `known`: the branch's latest marker when the caller read it (null: none); else it is read. */
  async measure(q: Queryable, branch: BranchRow, known?: ContextMarkerRow | null): Promise<MeasuredWindow> {
    const marker = known === undefined ? await findLatestMarker(q, branch.id) : (known ?? undefined);
    const scope = this.scope(branch, marker);
    const { messages, tokens, uncounted } = await transcriptTables.tallyModelWindow(q, scope);
    let counted = 0;
    if (uncounted.length > 0) {
      const counts = this.countsOf(
        branch.threadId,
        uncounted.map((message) => ({ id: message.originId, content: message.content })),
      );
      await insertTokenCounts(q, counts);
      counted = counts.reduce((sum, count) => sum + count.tokens, 0);
    }
    return { marker, messages, tokens: this.fixedTokens + (marker?.summaryTokens ?? 0) + tokens + counted };
  }

  /**
   * The token counts of messages a settle just wrote (by their own ids: a new message has no
   * origin of another), so the next measure finds them counted: the same count the measure would
   * make of them as stored, one round trip fewer as the next turn starts.
   */
  countsOf(threadId: string, written: ReadonlyArray<{ id: string; content: unknown }>): TokenCount[] {
    return written.map((message) => ({
      threadId,
      messageId: message.id,
      encoding: this.encoding,
      tokens: countStoredParts(partsOf(message.content), this.encoding),
    }));
  }

  /** The tokens a new message adds (its text and images), counted like a stored one. */
  incomingTokens(text: string, attachments: readonly Attachment[]): number {
    return countStoredParts([{ type: 'text', text }], this.encoding) + attachments.length * IMAGE_TOKENS;
  }

  /** The tokens of a summary as the model gets it (a system message). */
  summaryTokens(systemText: string): number {
    return countSystemTokens(systemText, this.encoding);
  }

  /** The meter of a branch, for the detail and the settle event. */
  async state(q: Queryable, branch: BranchRow): Promise<ContextState> {
    const measured = await this.measure(q, branch);
    const { marker } = measured;
    const messageId = marker && (await originOfMessage(q, branch.id, marker.firstMessageId));
    return {
      window: this.settings.window,
      used: measured.tokens,
      compactAt: this.settings.compactAt,
      marker: marker && messageId ? { ...toContextMarker(marker), messageId } : null,
    };
  }
}

export function toContextMarker(row: ContextMarkerRow): ContextMarker {
  return {
    id: row.id,
    kind: row.kind,
    summary: row.summary,
    error: row.error,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A stored message's parts (memory's `format: 2`; an older message may hold only `content`). */
export function partsOf(content: unknown): StoredParts {
  const { parts, content: text } = (content ?? {}) as { parts?: unknown; content?: unknown };
  if (Array.isArray(parts) && parts.length > 0) return parts as StoredParts;
  return typeof text === 'string' ? [{ type: 'text', text }] : [];
}
