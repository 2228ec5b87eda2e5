import { type HitlRequest, type Turn, threadBusyMessages } from '@chat/contracts';
import type { ChatStatus } from 'ai';
import { isBusy, waitsForApproval, whenItemsRun } from './queue';
import { isReconnecting } from './reducer';
import type { ThreadPageState } from './state';

/** What the chat page's components render, derived from the state (pure). */

/** The banner's words: this tab's last refusal, or else the error a stream ended with. */
export function noticeMessage(state: ThreadPageState): string | null {
  if (state.notice) return state.notice.message;
  const failed = state.streamError;
  if (!failed) return null;
  // A failed turn stays at the queue head with its error (Q11): the Dock says it, once.
  const inDock = state.queue.items.some((turn) => turn.id === failed.turnId && turn.status === 'failed');
  return inDock ? null : failed.message;
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
}

export interface DockView {
  items: DockItem[];
  paused: boolean;
  /** A reply runs: the head's action is Stop & send. */
  busy: boolean;
}

export function dockView(state: ThreadPageState): DockView {
  const when = whenItemsRun(state);
  return {
    items: state.queue.items.map((turn, index) => ({
      turn,
      position: index + 1,
      isHead: index === 0,
      when: when[index] ?? '',
      editing: state.editing.queuedTurnId === turn.id,
    })),
    paused: state.queue.paused,
    busy: isBusy(state),
  };
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

/** The first sentence of a finished reply, for the live region (never the whole reply). */
export function firstSentence(text: string, limit = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end >= 0 ? flat.slice(0, end + 1) : flat;
  return sentence.length > limit ? `${sentence.slice(0, limit - 1).trimEnd()}…` : sentence;
}

/** What the live region says when a reply finishes. */
export function finishedAnnouncement(state: ThreadPageState): string | null {
  const finished = state.lastFinished;
  if (!finished) return null;
  if (finished.failed) return 'The reply failed.';
  const sentence = firstSentence(finished.text);
  return sentence ? `Reply finished: ${sentence}` : 'Reply finished.';
}
