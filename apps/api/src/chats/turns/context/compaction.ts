import { AGENT_COMPACTION_SUMMARY, type CompactionProgress, compactionMessages } from '@chat/contracts';
import type { BranchRow, ContextMarkerRow, Database } from '@chat/db';
import { summaryForModel } from '../../../agent/contextSummary';
import type { Logger } from '../../../platform/logger';
import { transcriptTables } from '../../transcript/tables';
import type { RuntimeDriver } from '../driver/types';
import { findLatestMarker, insertMarker } from './repository';
import { type ContextWindows, type MeasuredWindow, partsOf } from './window';

/**
 * Compaction (C3): when a branch's next model call would pass the threshold, the older messages
 * after its marker are summarized by the model and a new marker is stored; later calls get the
 * summary instead of those messages and the recent ones whole. Nothing is deleted: a marker only
 * moves where the model's view starts. A compaction that fails (or a driver that cannot summarize,
 * or compaction turned off) falls back to a cut: the newest messages that fit, and the marker says so.
 * A marker is stored before any call uses it; a crash before that leaves the branch as it was.
 */

/** The share of the window the recent messages kept whole may take (below any threshold). */
const KEEP_RECENT_SHARE = 0.4;
/**
 * The longest a summary call may take: one that hangs falls back like one that fails, so the turn
 * (whose idle bound only starts with its own model call) never waits on it forever.
 */
export const SUMMARY_TIMEOUT_MS = 120_000;
/** The share of the window one summary call's messages may take (with its instruction and the earlier summary). */
const SUMMARY_SOURCE_SHARE = 0.6;

export interface CompactionDeps {
  db: Database;
  driver: RuntimeDriver;
  windows: ContextWindows;
  logger: Logger;
}

/** What the model gets of a branch for its next call (the driver's `history`). */
export interface ModelHistory {
  messages: number;
  summary: string | null;
}

export type OnProgress = (progress: CompactionProgress) => void;

/**
 * The history a turn's model call gets: the window measured, and compacted first when the call
 * (with its new message of `incoming` tokens) would pass the threshold (or, compaction off, the
 * window). `onProgress` hears a compaction start and end. Returns whether a marker was added.
 */
export async function prepareHistory(
  deps: CompactionDeps,
  branch: BranchRow,
  incoming: number,
  signal: AbortSignal,
  onProgress: OnProgress,
  /** The branch's latest marker when the caller read it already (null: none; ADR-060). */
  marker?: ContextMarkerRow | null,
): Promise<ModelHistory & { compacted: boolean }> {
  const { windows } = deps;
  const { window, compactAt } = windows.settings;
  let measured = await windows.measure(deps.db, branch, marker);
  const limit = compactAt === null ? window : Math.floor(window * compactAt);
  let compacted = false;
  if (measured.tokens + incoming > limit) {
    const marker = await compact(deps, branch, measured, { force: false, signal, onProgress });
    if (marker) {
      compacted = true;
      measured = await windows.measure(deps.db, branch);
    }
  }
  return { ...historyOf(measured), compacted };
}

function historyOf(measured: MeasuredWindow): ModelHistory {
  const { marker } = measured;
  return { messages: measured.messages, summary: marker?.kind === 'summary' ? marker.summary : null };
}

/**
 * Adds a marker to the branch: the summary of its older messages (or, when summarizing is off or
 * fails, a cut keeping the newest that fit). `force` (Compact now): summarize even under the
 * threshold, keeping about half of what the model sees now. Null when there is nothing older to
 * leave out (the window holds a single exchange).
 */
export async function compact(
  deps: CompactionDeps,
  branch: BranchRow,
  measured: MeasuredWindow,
  options: { force: boolean; signal: AbortSignal; onProgress: OnProgress },
): Promise<ContextMarkerRow | null> {
  const { db, windows } = deps;
  const { window, compactAt } = windows.settings;
  const rows = await transcriptTables.readModelWindow(db, windows.scope(branch, measured.marker));
  const total = rows.reduce((sum, row) => sum + row.tokens, 0);
  const budget = Math.floor(window * KEEP_RECENT_SHARE);
  const first = firstKept(rows, options.force ? Math.min(budget, Math.floor(total / 2)) : budget);
  if (first === undefined) return null;
  const kept = rows[first];
  if (!kept) return null;
  const base = {
    threadId: branch.threadId,
    branchId: branch.id,
    previousId: measured.marker?.id ?? null,
    firstMessageId: kept.id,
    firstMessageAt: kept.createdAt,
  };
  const summarize = deps.driver.summarize?.bind(deps.driver);
  if (compactAt === null && !options.force) return await stored(deps, branch, { ...base, kind: 'cut' });
  options.onProgress({ status: 'compacting' });
  let summary: string;
  try {
    if (!summarize) throw new Error(compactionMessages.failed);
    // A part longer than the model's window (a long chat imported, or from before compaction) is
    // summarized in pieces that fit, oldest first, each summary carried into the next call.
    summary = measured.marker?.kind === 'summary' ? (measured.marker.summary ?? '') : '';
    for (const piece of pieces(rows.slice(0, first), Math.floor(window * SUMMARY_SOURCE_SHARE))) {
      summary = await summarize({
        previousSummary: summary || null,
        messages: piece.map((row) => ({ role: row.role, text: plainText(row.content) })),
        abortSignal: AbortSignal.any([options.signal, AbortSignal.timeout(SUMMARY_TIMEOUT_MS)]),
      });
      if (!summary) throw new Error(compactionMessages.failed);
    }
  } catch (error) {
    if (options.signal.aborted) throw error;
    const reason = readableError(error);
    deps.logger.warn({ threadId: branch.threadId, branchId: branch.id, error: reason }, 'compaction failed');
    options.onProgress({ status: 'failed', error: reason });
    return await stored(deps, branch, { ...base, kind: 'cut', error: reason });
  }
  const marker = await stored(deps, branch, {
    ...base,
    kind: 'summary',
    summary,
    summaryTokens: windows.summaryTokens(summaryForModel(summary)),
  });
  options.onProgress({ status: 'done' });
  return marker;
}

/** Consecutive runs of messages of at most `budget` tokens each (a message past it alone). */
function pieces<T extends { tokens: number }>(rows: T[], budget: number): T[][] {
  const result: T[][] = [];
  let current: T[] = [];
  let tokens = 0;
  for (const row of rows) {
    if (current.length > 0 && tokens + row.tokens > budget) {
      result.push(current);
      current = [];
      tokens = 0;
    }
    current.push(row);
    tokens += row.tokens;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** The marker stored, or the one a racing compaction of the branch stored first. */
async function stored(
  deps: CompactionDeps,
  branch: BranchRow,
  values: Parameters<typeof insertMarker>[1],
): Promise<ContextMarkerRow | null> {
  return (await insertMarker(deps.db, values)) ?? (await findLatestMarker(deps.db, branch.id)) ?? null;
}

/**
 * Where the kept part starts: the oldest user message after the first message whose messages from
 * there on fit `budget` (the model's view then starts at a question, recent messages whole), else
 * the newest user message after the first, else the last message. Undefined with one message.
 */
function firstKept(rows: Array<{ role: string; tokens: number }>, budget: number): number | undefined {
  if (rows.length < 2) return undefined;
  let suffix = 0;
  let fits: number | undefined;
  let newestUser: number | undefined;
  for (let index = rows.length - 1; index >= 1; index -= 1) {
    const row = rows[index];
    if (!row) continue;
    suffix += row.tokens;
    if (row.role !== 'user') continue;
    newestUser ??= index;
    if (suffix <= budget) fits = index;
  }
  return fits ?? newestUser ?? rows.length - 1;
}

/** A stored message as the summary request quotes it: its text, and its tool calls by name. */
function plainText(content: unknown): string {
  return partsOf(content)
    .map((part) => {
      if (part.type === 'text') return String(part.text ?? '');
      if (part.type === 'tool-invocation') {
        const name = (part.toolInvocation as { toolName?: unknown } | undefined)?.toolName;
        return `[tool ${typeof name === 'string' ? name : 'call'}]`;
      }
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

function readableError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]?.trim() || compactionMessages.failed;
}

/**
 * A6: an agent that keeps its own session (Claude Code) compacted it during the turn of
 * `userMessageId`: the branch gets a marker there, as a compaction of the host's would, so the
 * transcript shows where and the meter counts from it. The summary is the agent's own and stays in
 * its session; the marker's says so. Nothing when the message is not the branch's.
 */
export async function markAgentCompaction(
  db: Database,
  branch: BranchRow,
  userMessageId: string,
): Promise<void> {
  const [message] = await transcriptTables.readMessagesFrom(db, branch.memoryThreadId, userMessageId);
  if (!message) return;
  const previous = await findLatestMarker(db, branch.id);
  await insertMarker(db, {
    threadId: branch.threadId,
    branchId: branch.id,
    previousId: previous?.id ?? null,
    kind: 'summary',
    summary: AGENT_COMPACTION_SUMMARY,
    firstMessageId: message.id,
    firstMessageAt: message.createdAt,
  });
}
