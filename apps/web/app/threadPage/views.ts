import {
  CONTEXT_WARN_AT,
  type DrainMode,
  type HitlRequest,
  refusalMessages,
  type ToolServer,
  type ToolSetting,
  type Turn,
  threadBusyMessages,
} from '@chat/contracts';
import type { ChatStatus } from 'ai';
import { latestSettledReplyId } from './away';
import { isBlockedByFailure, isBusy, shownQueueItems, waitsForApproval, whenItemsRun } from './queue';
import { type ItemMoves, isMovable, movesOf } from './queueOrder';
import { isReconnecting } from './reducer';
import type { ThreadPageState } from './state';
import { firstSentence } from './transcript';

export { firstSentence };

/** What the chat page's components render, derived from the state (pure). */

/**
 * The banner's words: this tab's last refusal, else that the server is too busy to take a send
 * yet (it is being sent again), else the error a stream ended with.
 */
export function noticeMessage(state: ThreadPageState): string | null {
  if (state.notice) return state.notice.message;
  if (state.shed > 0) return refusalMessages.overloaded.retrying;
  const failed = state.streamError;
  if (!failed) return null;
  // A failed turn stays at the queue head with its error (Q11): the Dock says it, once.
  const inDock = state.queue.items.some((turn) => turn.id === failed.turnId && turn.status === 'failed');
  return inDock ? null : failed.message;
}

export interface NoticeView {
  message: string | null;
  /** The banner offers Retry. */
  retryable: boolean;
  /** It says the server is busy and a send is being tried again: no error, nothing to dismiss. */
  busy: boolean;
}

export function noticeView(state: ThreadPageState): NoticeView {
  return {
    message: noticeMessage(state),
    retryable: state.notice?.retryable ?? false,
    busy: !state.notice && state.shed > 0,
  };
}

export interface ComposerView {
  /** A reply is being produced: Stop shows. */
  busy: boolean;
  /** Enter adds to the queue rather than starting a reply. */
  queues: boolean;
  /** The queue is paused: a send waits in it. */
  paused: boolean;
  disabled: boolean;
  disabledReason: string | undefined;
  /** What the reply waits for, if anything (a person's approval). */
  waitingFor: string | undefined;
  /** A reply runs that a message can steer (join at its next step). */
  steers: boolean;
}

export function composerView(state: ThreadPageState): ComposerView {
  const busy = isBusy(state);
  const { load, editing, queue } = state;
  const loading = load.phase === 'loading';
  let disabledReason: string | undefined;
  if (loading) disabledReason = 'Loading…';
  else if (isReconnecting(state)) disabledReason = 'Reconnecting…';
  else if (editing.queuedTurnId) disabledReason = 'Finish editing the queued message first';
  else if (editing.messageId) disabledReason = 'Finish editing the message first';
  return {
    busy: busy && load.phase === 'ready',
    // A paused queue takes a send too, even with nothing in it (the server queues it).
    queues: busy || queue.items.length > 0 || queue.paused,
    paused: queue.paused,
    // The thread takes no input while it loads, or while anything is being edited (Q8).
    disabled: load.phase !== 'ready' || editing.queuedTurnId !== null || editing.messageId !== null,
    disabledReason,
    waitingFor: waitsForApproval(state) ? 'an approval' : undefined,
    steers: queue.activeTurn?.status === 'running',
  };
}

export interface DockItem {
  turn: Turn;
  position: number;
  isHead: boolean;
  /** When it runs, in plain words. */
  when: string;
  editing: boolean;
  /**
   * It may be moved and merged (Q13, Q14): not a failed head, not a steer. Its moves one place up
   * or down, and to the front ("Run next"), where it has them.
   */
  movable: boolean;
  moves: ItemMoves;
  /** While a reply runs: "Stop & send this" moves it to the head and runs it (Q9). */
  stopAndSend: boolean;
  /** Picked for a merge. */
  picked: boolean;
}

export interface DockView {
  items: DockItem[];
  /** Who runs the queue (Q15): `background` is the switch "Keep going when I leave" on. */
  drainMode: DrainMode;
  /** The Dock shows: something waits, or the queue is paused. */
  shown: boolean;
  paused: boolean;
  /** A reply runs: the head's action is Stop & send. */
  busy: boolean;
  /** At least two items may move: they can be dragged, and picked to merge. */
  reorderable: boolean;
  /** The Dock is picking items to merge; how many are picked; the merge is on its way. */
  picking: boolean;
  picked: number;
  merging: boolean;
}

export function dockView(state: ThreadPageState): DockView {
  const when = whenItemsRun(state);
  const items = shownQueueItems(state);
  const busy = isBusy(state);
  const head = items[0];
  // Stop & send on another item moves it to the head first: only when nothing keeps the front.
  const headIsFree = head !== undefined && isMovable(head);
  const picked = state.selection ?? [];
  return {
    items: items.map((turn, index) => ({
      turn,
      position: index + 1,
      isHead: index === 0,
      when: when[index] ?? '',
      editing: state.editing.queuedTurnId === turn.id,
      movable: isMovable(turn),
      moves: movesOf(items, turn.id),
      stopAndSend: busy && index > 0 && headIsFree && isMovable(turn),
      picked: picked.includes(turn.id),
    })),
    paused: state.queue.paused,
    drainMode: drainModeOf(state),
    shown: items.length > 0 || state.queue.paused,
    busy,
    reorderable: items.filter(isMovable).length >= 2,
    picking: state.selection !== null,
    picked: picked.length,
    merging: state.merging,
  };
}

/** The order of the Dock's items as shown (ids), for an undo to find a place again. */
export function shownOrder(state: ThreadPageState): string[] {
  return shownQueueItems(state).map((turn) => turn.id);
}

/** The place a move names, as the live region says it: "Moved to position 2 of 4." */
export function movedAnnouncement(items: readonly Pick<Turn, 'id'>[], turnId: string): string {
  const position = items.findIndex((turn) => turn.id === turnId) + 1;
  return position > 0 ? `Moved to position ${position} of ${items.length}.` : 'Moved.';
}

export interface VersionsView {
  editingMessageId: string | null;
  changing: boolean;
  /** Why the shown version cannot change now (switch, delete), in the server's own words, or null. */
  lockedReason: string | null;
  /** Why a message cannot be edited into a new version (or regenerated) now, or null. */
  editLockedReason: string | null;
}

/**
 * The server refuses a switch or delete while a turn runs, and an edit also while items wait
 * (thread_busy): queued items run on the version shown when they are claimed, but an edit's reply
 * would overtake them. The controls wait for the same, and say why.
 */
export function versionsView(state: ThreadPageState): VersionsView {
  const changing = state.versionChanges > 0;
  let lockedReason: string | null = null;
  if (changing) lockedReason = 'Changing versions…';
  else if (isBusy(state)) lockedReason = threadBusyMessages.turn_running;
  const editLockedReason =
    lockedReason ?? (state.queue.items.length > 0 ? threadBusyMessages.queue_waiting : null);
  return { editingMessageId: state.editing.messageId, changing, lockedReason, editLockedReason };
}

/**
 * The turns whose messages are not final yet: the active one and every item waiting (of those
 * only a failed attempt at the head has messages, Q11). A new chat cannot start from their
 * messages (P3), as the server refuses it (`thread_busy`, `not_settled`).
 */
export function unsettledTurnIds(state: ThreadPageState): string[] {
  return [state.queue.activeTurn, ...state.queue.items].flatMap((turn) => (turn ? [turn.id] : []));
}

/** What `UChatMessages` is told: a reply is on its way, streaming, or not. */
export function transcriptStatus(state: ThreadPageState): ChatStatus {
  const live = state.transcript.live;
  if (!live) return 'ready';
  return live.reply ? 'streaming' : 'submitted';
}

/** The approval request of a tool call, by its id. */
export function approvalsByToolCall(state: ThreadPageState): Map<string, HitlRequest> {
  return new Map(state.hitl.map((request) => [request.toolCallId, request]));
}

/** What the live region says when a reply finishes. */
export function finishedAnnouncement(state: ThreadPageState): string | null {
  const finished = state.lastFinished;
  if (!finished) return null;
  if (finished.failed) return 'The reply failed.';
  const sentence = firstSentence(finished.text);
  return sentence ? `Reply finished: ${sentence}` : 'Reply finished.';
}

/** Who runs the queue, as this tab last asked while the server has not answered (Q15). */
export function drainModeOf(state: ThreadPageState): DrainMode {
  return state.drainModeWanted ?? state.thread?.drainMode ?? 'viewer';
}

/**
 * The tab's title (Q15): "(2) Chat title" while replies finished unseen in a hidden tab;
 * "Approval needed · Chat title" while the tab is hidden and the reply waits for the person's
 * approval (H3), and "Blocked · Chat title" while a failed message holds the queue: the count
 * gives way, since nothing more will finish until the person comes back. A visible tab keeps the
 * plain title (the Dock and the card say it there).
 */
export function pageTitle(state: ThreadPageState, title: string): string {
  if (state.away.visible) return title;
  // What waits for the person comes first: a reply held on their approval (H3), a failed head.
  if (waitsForApproval(state)) return `Approval needed · ${title}`;
  if (isBlockedByFailure(state)) return `Blocked · ${title}`;
  return state.away.unseen > 0 ? `(${state.away.unseen}) ${title}` : title;
}

/**
 * The reply this browser should remember as seen (Q15): the latest whole reply while the page is
 * visible and loaded; undefined while nothing new is seen (hidden, or still loading).
 */
export function seenReplyToRemember(state: ThreadPageState): string | null | undefined {
  if (!state.away.visible || state.load.phase !== 'ready') return undefined;
  return latestSettledReplyId(state);
}

/** The context meter by the composer (C2) and the compaction it shows (C3). */
export interface ContextMeterView {
  used: number;
  window: number;
  /** Whole percent of the window the next call holds before its message (at most 100). */
  percent: number;
  /** `warn`: near the limit (amber). */
  level: 'ok' | 'warn';
  /** What the meter says in words (its label and tooltip). */
  label: string;
  /** A compaction runs now (in a turn, or Compact now). */
  compacting: boolean;
  /** The last compaction of a running turn failed: why (the marker says so too once it settles). */
  failed: string | null;
  /** Compact now can be pressed: nothing runs, and nothing compacts already. */
  canCompact: boolean;
  /** Why Compact now cannot run, or null. */
  compactLockedReason: string | null;
}

const tokens = new Intl.NumberFormat('en-US');

export function contextMeterView(state: ThreadPageState): ContextMeterView | null {
  const { context, compaction } = state;
  if (!context) return null;
  const compacting = compaction?.progress.status === 'compacting';
  const running = state.queue.activeTurn !== null;
  const compactLockedReason = compacting ? 'Compacting…' : running ? threadBusyMessages.reply_running : null;
  return {
    ...meterFill(context.used, context.window),
    compacting,
    failed: compaction?.progress.status === 'failed' ? (compaction.progress.error ?? null) : null,
    canCompact: compactLockedReason === null,
    compactLockedReason,
  };
}

/** How full `window` is with `used` tokens: the meter's bar, colour and words. */
function meterFill(used: number, window: number, waiting = 0) {
  const fraction = window > 0 ? used / window : 0;
  const attached = waiting > 0 ? `, ${tokens.format(waiting)} of them the attached documents (about)` : '';
  return {
    used,
    window,
    percent: Math.min(100, Math.round(fraction * 100)),
    level: fraction >= CONTEXT_WARN_AT ? ('warn' as const) : ('ok' as const),
    label: `Context: ${tokens.format(used)} of ${tokens.format(window)} tokens${attached}`,
  };
}

/**
 * The meter with the documents attached in the composer counted (C2: the next message holds
 * them too), as much of them as the model will read (`composerDocumentsView`).
 */
export function meterWithWaiting(meter: ContextMeterView, waiting: number): ContextMeterView {
  if (waiting <= 0) return meter;
  return { ...meter, ...meterFill(meter.used + waiting, meter.window, waiting) };
}

/** The tool settings panel (T1): each tool with the mode asked for here, else the stored one. */
export interface ToolSettingsView {
  tools: ToolSetting[];
  /** T3: the MCP servers whose tools are not offered now (starting, or unavailable). */
  serversAway: ToolServer[];
  /** A reply is running: a change reaches it at its next step (T2). */
  replyRunning: boolean;
}

export function toolSettingsView(state: ThreadPageState): ToolSettingsView {
  return {
    tools: state.tools.map((tool) => ({ ...tool, mode: state.toolsWanted[tool.name] ?? tool.mode })),
    serversAway: state.toolServers.filter((server) => server.status !== 'available'),
    replyRunning: state.queue.activeTurn !== null,
  };
}
