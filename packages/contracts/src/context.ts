/**
 * A reply's token usage (C1), the model's context window as the next call would fill it (C2), and
 * the compaction of a branch's older messages into a summary the model gets instead (C3).
 */

/** Token usage of one reply as the model reported it (summed over its model calls). */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the provider served from its cache, when it says. */
  cachedInputTokens?: number;
}

/**
 * Where the model's view of a branch starts: the first message it still gets whole. Before it, the
 * model gets `summary` (a compaction), or nothing (a cut: compaction off, or a compaction that
 * failed and fell back to the newest messages that fit, `error` saying why).
 */
export interface ContextMarker {
  id: string;
  kind: 'summary' | 'cut';
  /** What the model gets instead of the messages before the marker (kind `summary`). */
  summary: string | null;
  /** A compaction that failed: why, in words a person can read (the marker says it fell back). */
  error: string | null;
  createdAt: string;
}

/** The context meter (C2): how full the model's window would be for the next message. */
export interface ContextState {
  /** The model's context window, in tokens. */
  window: number;
  /** Tokens the next call holds before the new message: instructions, summary, the messages since the marker. */
  used: number;
  /** The fraction of the window past which the next turn compacts first; null when compaction is off. */
  compactAt: number | null;
  /** The shown branch's latest marker (what the model sees starts there), if any. */
  marker: (ContextMarker & { messageId: string }) | null;
}

/** A compaction's progress, streamed in a turn's reply stream as `data-compaction` (not stored). */
export interface CompactionProgress {
  status: 'compacting' | 'done' | 'failed';
  /** `failed`: why; the turn goes on with the newest messages that fit. */
  error?: string;
}

/**
 * A6: the summary a marker shows when an agent (Claude Code) compacted its own conversation: the
 * agent keeps its summary in its session, so the marker says where and that it happened.
 */
export const AGENT_COMPACTION_SUMMARY =
  'The agent summarized the conversation before this message itself, to fit its context window; its summary stays in its own session.';

/** The chunk type of compaction progress in a turn's stream (a UI message stream data part). */
export const COMPACTION_PART = 'data-compaction';

/**
 * The fraction of the window past which the meter turns amber: near the limit, before the default
 * compaction threshold (0.8) is reached.
 */
export const CONTEXT_WARN_AT = 0.6;

/** `POST /api/threads/:id/compact`'s answer: the new marker (null: nothing older to summarize yet). */
export interface CompactAnswer {
  marker: ContextMarker | null;
  context: ContextState;
}

/** The share of a model's window kept for its reply: documents never fill it (D1). */
export const REPLY_RESERVE_SHARE = 0.25;

/**
 * How many tokens of documents' text one model call may hold (D1), the one rule for the API's
 * call and the composer's warning: the deployment's budget (`configured`), capped by what the
 * model's window leaves once the rest of the call (`otherTokens`: instructions, messages, the new
 * message) and a quarter of the window for the reply are counted. A model with a small window so
 * never gets a request it would refuse, and a queued message gets the budget of the model it runs
 * on, whichever was picked when it was queued.
 */
export function documentTokensFor(window: number, otherTokens: number, configured: number): number {
  const left = Math.floor(window * (1 - REPLY_RESERVE_SHARE)) - otherTokens;
  return Math.max(0, Math.min(configured, left));
}
