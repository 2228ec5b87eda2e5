import type { StopAndSendLeftWaiting, ThreadEvent, Turn, TurnQueue } from '@chat/contracts';
import { canTransition, errorMessage } from '@chat/contracts';
import {
  hasUserMessageOf,
  optimisticUserMessage,
  textOfMessage,
  toChatUIMessages,
} from '../utils/chatMessages';
import {
  approvalsWhileAway,
  firstLoaded,
  notificationShown,
  settledWhileAway,
  visibilityChanged,
} from './away';
import type { StartKind, ThreadPageEvent } from './events';
import { applyQueue, canPick, takeFromQueue } from './queue';
import type { Refusal, SettledEvent, StreamOrigin, ThreadPageState } from './state';
import {
  appendMessages,
  applyTurnMessages,
  endLive,
  markInterrupted,
  openLive,
  removeTurnMessages,
  setFeedback,
  updateLive,
} from './transcript';

/** How many finished turn ids (and their reply ids) are remembered: far more than can still be active. */
const REMEMBERED_TURNS = 50;

/**
 * The chat page's reducer: the next state after one event. Pure (no Vue, no fetch, no clock), so
 * every ordering of server facts can be tested by feeding events in that order.
 */
export function reduceThreadPage(state: ThreadPageState, event: ThreadPageEvent): ThreadPageState {
  return withCatchUpRead(reduceEvent(state, event));
}

/**
 * A transcript this tab could not show because a stream was shown (`transcriptBehind`) is read
 * again once nothing is shown and no settle event is awaited: until a read's transcript is shown,
 * a turn that settled meanwhile (another tab's) would be missing here with nothing to bring it.
 */
function withCatchUpRead(state: ThreadPageState): ThreadPageState {
  const { transcriptBehind, transcript, settleWait, detail } = state;
  if (!transcriptBehind || transcript.live !== null || settleWait !== null) return state;
  if (detail.wanted || detail.inFlight > 0) return state;
  return { ...state, detail: { ...detail, wanted: true } };
}

function reduceEvent(state: ThreadPageState, event: ThreadPageEvent): ThreadPageState {
  switch (event.type) {
    case 'detail.requested':
      return {
        ...state,
        detail: { wanted: false, inFlight: state.detail.inFlight + 1, latest: state.detail.latest + 1 },
      };
    case 'detail.answered':
      return detailAnswered(state, event);
    case 'detail.failed':
      return detailFailed(state, event.error, event.ofThread);
    case 'load.retryScheduled':
      return { ...state, load: { ...state.load, retryScheduled: true } };
    case 'load.retryDue':
      return {
        ...state,
        load: { ...state.load, retryScheduled: false },
        detail: { ...state.detail, wanted: true },
      };

    case 'events.connected':
      // Events may have been missed while disconnected: read the thread again (the first connect
      // races the first load, which is on its way anyway).
      return {
        ...state,
        attached: true,
        detail: { ...state.detail, wanted: state.detail.wanted || state.load.phase !== 'loading' },
      };
    case 'events.disconnected':
      return { ...state, attached: false };
    case 'server':
      return serverEvent(state, event.event);

    case 'start.requested': {
      // A start the person asked for replaces the last banner; a claim or a decision says nothing.
      const quiet = event.kind === 'claim' || event.kind === 'decision';
      return {
        ...state,
        starts: state.starts + 1,
        notice: quiet ? state.notice : null,
        streamError: quiet ? state.streamError : null,
        // The person is here and writing: what they were away for is behind them.
        away: event.kind === 'send' ? { ...state.away, divider: null } : state.away,
      };
    }
    case 'start.shed':
      return { ...state, shed: state.shed + 1 };
    case 'start.shedEnded':
      return { ...state, shed: Math.max(0, state.shed - 1) };
    case 'start.queued':
      return startQueued(state, event.kind, event.turnQueue);
    case 'start.refused':
      return startRefused(state, event);
    case 'stream.opened':
      return streamOpened(state, event);
    case 'stream.message':
      if (state.transcript.live?.turnId !== event.turnId) return state;
      return { ...state, transcript: updateLive(state.transcript, event.message) };
    case 'stream.ended':
      return streamEnded(state, event.turnId, event.outcome, event.error);
    case 'settleWait.started':
      if (state.settleWait?.turnId !== event.turnId) return state;
      return { ...state, settleWait: { turnId: event.turnId, timerStarted: true } };
    case 'settleWait.expired':
      if (state.settleWait?.turnId !== event.turnId) return state;
      return { ...state, settleWait: null, detail: { ...state.detail, wanted: true } };

    case 'stop.started': {
      // The shown turn ends here on purpose: the server may still call it active for a moment.
      const stopped = state.queue.activeTurn?.id ?? state.transcript.live?.turnId;
      return {
        ...state,
        stopping: state.stopping + 1,
        finished: stopped ? remember(state.finished, stopped) : state.finished,
      };
    }
    case 'stop.ended':
      return stopEnded(state, event);

    case 'queue.answered':
      return applyQueue(state, event.turnQueue);
    case 'queue.attemptRemoved':
      return { ...state, detail: { ...state.detail, wanted: true } };
    case 'queueEdit.started':
      return { ...state, editing: { ...state.editing, queuedTurnId: event.turnId } };
    case 'queueEdit.ended':
      return { ...state, editing: { ...state.editing, queuedTurnId: null } };
    case 'queueMove.requested':
      return { ...state, moves: [...state.moves, event.move] };
    // Moves are answered in the order they were sent (the Dock sends one at a time).
    case 'queueMove.answered':
      return applyQueue({ ...state, moves: state.moves.slice(1) }, event.turnQueue);
    case 'queueMove.refused':
      return showNotice({ ...state, moves: state.moves.slice(1) }, event.error);
    case 'queueSelection.started':
      return canPick(state, event.turnId) ? { ...state, selection: [event.turnId] } : state;
    case 'queueSelection.toggled':
      return pickToggled(state, event.turnId);
    case 'queueSelection.ended':
      return { ...state, selection: null };
    case 'queueMerge.requested':
      return { ...state, merging: true };
    case 'queueMerge.answered':
      return applyQueue({ ...state, merging: false, selection: null }, event.turnQueue);
    case 'queueMerge.refused':
      // The pick stays, so the person can change it and try again.
      return showNotice({ ...state, merging: false }, event.error);

    case 'messageEdit.started':
      return { ...state, editing: { ...state.editing, messageId: event.messageId } };
    case 'messageEdit.ended':
      return { ...state, editing: { ...state.editing, messageId: null } };
    case 'versionChange.started':
      return { ...state, versionChanges: state.versionChanges + 1, notice: null };
    case 'versionChange.ended':
      return { ...state, versionChanges: Math.max(0, state.versionChanges - 1) };

    case 'decision.started':
      return { ...state, deciding: event.requestId };
    case 'decision.shown':
      // Until the server's next word, the card shows the decision the person made.
      return {
        ...state,
        hitl: state.hitl.map((request) =>
          request.id === event.requestId ? { ...request, status: event.status } : request,
        ),
      };
    case 'decision.ended':
      return { ...state, deciding: null };
    case 'feedback.shown':
      return { ...state, transcript: setFeedback(state.transcript, event.messageId, event.feedback) };
    case 'notice.shown':
      return showNotice(state, event.error, event.prefix);
    case 'notice.dismissed':
      return { ...state, notice: null, streamError: null };
    case 'compaction.progress':
      return { ...state, compaction: { turnId: event.turnId, progress: event.progress } };
    case 'compactNow.requested':
      return { ...state, compaction: { turnId: null, progress: { status: 'compacting' } }, notice: null };
    case 'compactNow.answered':
      return { ...state, context: event.answer.context, compaction: null };
    case 'compactNow.refused':
      return showNotice({ ...state, compaction: null }, event.error);
    case 'threadList.refreshed':
      return { ...state, threadListStale: false };

    case 'toolMode.requested':
      return { ...state, toolsWanted: { ...state.toolsWanted, [event.name]: event.mode } };
    case 'toolMode.answered':
      return toolModeAnswered(state, event.name);
    case 'toolMode.refused':
      return showNotice({ ...state, toolsWanted: withoutKey(state.toolsWanted, event.name) }, event.error);
    case 'toolPanel.opened':
      return { ...state, detail: { ...state.detail, wanted: true } };
    case 'drainMode.requested':
      return { ...state, drainModeWanted: event.mode };
    case 'drainMode.answered':
      return { ...state, drainModeWanted: null, thread: event.thread };
    case 'drainMode.refused':
      return showNotice({ ...state, drainModeWanted: null }, event.error);
    case 'chatSettings.answered':
      // The meter is read again: its window is the chosen model's (C2).
      return { ...state, thread: event.thread, detail: { ...state.detail, wanted: true } };
    case 'chatSettings.refused':
      return showNotice(state, event.error);
    case 'page.visibility':
      return visibilityChanged(state, event.visible);
    case 'seen.restored':
      return { ...state, away: { ...state.away, seenReplyId: event.replyId } };
    case 'notification.shown':
      return notificationShown(state, event.id);
  }
}

// --- reading the thread ------------------------------------------------------------------------

function detailAnswered(
  state: ThreadPageState,
  event: Extract<ThreadPageEvent, { type: 'detail.answered' }>,
): ThreadPageState {
  const detail = { ...state.detail, inFlight: Math.max(0, state.detail.inFlight - 1) };
  // An answer overtaken by a newer request shows nothing: the newer one is on its way.
  if (event.request !== state.detail.latest) return { ...state, detail };
  const { thread, turnQueue, hitl, notes, messages } = event.detail;
  let next: ThreadPageState = {
    ...state,
    detail,
    thread,
    hitl,
    notes,
    tools: event.detail.tools ?? [],
    toolServers: event.detail.toolServers ?? [],
    context: event.detail.context ?? null,
    load: { phase: 'ready', error: null, retryScheduled: false },
  };
  // Events that came while the detail was on its way are at least as new as it.
  if (event.at.queue === state.facts.queue) next = applyQueue(next, turnQueue);
  // Replacing the transcript mid-stream would drop the live reply: the thread is read again once
  // the stream has ended (`withCatchUpRead`). A transcript changed without a detail since the
  // request is newer than this one.
  if (event.at.transcript === state.facts.transcript) {
    if (state.transcript.live === null) {
      next = withoutStaleEditor({
        ...next,
        transcript: { messages: toChatUIMessages(messages), live: null },
        transcriptBehind: false,
      });
    } else {
      // Newer than what is shown, but not shown: it is read again once the stream has ended.
      next = { ...next, transcriptBehind: true };
    }
  }
  // Coming back to a chat that worked meanwhile: the divider above the first reply not seen (Q15).
  return state.load.phase === 'ready' ? next : firstLoaded(next);
}

/** The server stored the mode this tab asked for: shown as stored (other tabs hear `thread.changed`). */
function toolModeAnswered(state: ThreadPageState, name: string): ThreadPageState {
  const mode = state.toolsWanted[name];
  return {
    ...state,
    tools: state.tools.map((tool) => (tool.name === name && mode ? { ...tool, mode } : tool)),
    toolsWanted: withoutKey(state.toolsWanted, name),
  };
}

function withoutKey<T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> {
  const { [key]: _, ...rest } = record;
  return rest;
}

function detailFailed(state: ThreadPageState, error: Refusal, ofThread: boolean): ThreadPageState {
  const next = { ...state, detail: { ...state.detail, inFlight: Math.max(0, state.detail.inFlight - 1) } };
  if (!ofThread) return next;
  if (state.load.phase !== 'ready')
    return { ...next, load: { phase: 'failed', error, retryScheduled: false } };
  if (error.status === 404) return { ...next, deleted: true, threadListStale: true };
  return next;
}

/** The first load failed in a way that waiting can fix: the API is down, or starting again. */
export function isReconnecting(state: ThreadPageState): boolean {
  const error = state.load.error;
  return state.load.phase === 'failed' && error !== null && (error.retryable || error.status === 401);
}

// --- thread events -----------------------------------------------------------------------------

function serverEvent(state: ThreadPageState, event: ThreadEvent): ThreadPageState {
  if (event.threadId !== state.threadId) return state;
  switch (event.type) {
    case 'queue.changed':
    case 'turn.started':
      return applyQueue(state, event.turnQueue);
    case 'turn.settled':
      return settledWhileAway(
        turnSettled(applyQueue(withEnded(state, event.turn), event.turnQueue), event),
        event,
      );
    case 'hitl.changed':
      // The transcript's tool card (another tab asked, or decided) and any new note: read again.
      return {
        ...applyQueue(approvalsWhileAway(state, event.hitl), event.turnQueue),
        hitl: event.hitl,
        detail: { ...state.detail, wanted: true },
      };
    case 'thread.changed':
      return { ...state, detail: { ...state.detail, wanted: true }, threadListStale: true };
    case 'context.changed':
      // Another tab compacted, or a turn did: the meter and the marker are read again.
      return { ...state, detail: { ...state.detail, wanted: true } };
    case 'feedback.changed':
      return { ...state, transcript: setFeedback(state.transcript, event.messageId, event.feedback) };
    case 'thread.deleted':
      return { ...state, deleted: true, threadListStale: true };
  }
}

/** A turn that settled for good (it never runs again) is remembered, so no older queue revives it. */
function withEnded(state: ThreadPageState, turn: Turn): ThreadPageState {
  if (canTransition(turn.status, 'running') || state.endedTurns.includes(turn.id)) return state;
  return { ...state, endedTurns: [...state.endedTurns, turn.id].slice(-REMEMBERED_TURNS) };
}

/**
 * A turn settled. Its final messages replace this tab's copy of it; while its stream is still
 * shown here the event waits for the stream's end (whichever comes second applies). The detail
 * is read instead when the event cannot be applied.
 */
function turnSettled(state: ThreadPageState, event: SettledEvent): ThreadPageState {
  const turnId = event.turn.id;
  let next = withSettledContext(state, event);
  if (event.turn.status === 'interrupted') {
    next = { ...next, transcript: markInterrupted(next.transcript, turnId, next.replyIds[turnId]) };
  }
  if (next.transcript.live?.turnId === turnId) {
    return { ...next, earlySettles: { ...next.earlySettles, [turnId]: event } };
  }
  next = applySettled(next, event);
  return next.settleWait?.turnId === turnId ? { ...next, settleWait: null } : next;
}

/**
 * The meter after a settled turn of the shown version (C2); the compaction shown for that turn
 * ends with it (its marker is in the meter's state now).
 */
function withSettledContext(state: ThreadPageState, event: SettledEvent): ThreadPageState {
  const shown = state.thread?.activeBranchId === event.turn.branchId;
  const context = event.context && shown ? event.context : state.context;
  const compaction = state.compaction?.turnId === event.turn.id ? null : state.compaction;
  return { ...state, context, compaction };
}

/** Applies a settle event's messages, or asks for the detail when they cannot be applied. */
function applySettled(state: ThreadPageState, event: SettledEvent): ThreadPageState {
  const turnId = event.turn.id;
  const applied =
    event.messages && state.thread?.activeBranchId === event.turn.branchId
      ? applyTurnMessages(state.transcript, turnId, toChatUIMessages(event.messages), state.replyIds[turnId])
      : null;
  if (!applied) return { ...state, detail: { ...state.detail, wanted: true } };
  return withoutStaleEditor({
    ...state,
    transcript: applied,
    facts: { ...state.facts, transcript: state.facts.transcript + 1 },
  });
}

/** The message being edited left the transcript (another tab switched versions, say): its editor closes. */
function withoutStaleEditor(state: ThreadPageState): ThreadPageState {
  const editing = state.editing.messageId;
  if (!editing || state.transcript.messages.some((message) => message.id === editing)) return state;
  return { ...state, editing: { ...state.editing, messageId: null } };
}

// --- turn streams ------------------------------------------------------------------------------

/** Refusals that are part of the normal flow and say nothing (a lost claim race). */
function isQuiet(kind: StartKind, error: Refusal): boolean {
  return (kind === 'claim' || kind === 'sendNow') && error.code === 'not_eligible';
}

function startQueued(state: ThreadPageState, kind: StartKind, turnQueue: TurnQueue | null): ThreadPageState {
  let next: ThreadPageState = { ...state, starts: Math.max(0, state.starts - 1) };
  if (turnQueue) next = applyQueue(next, turnQueue);
  // A version retry whose turn no longer streams: read how it ended.
  if (kind === 'version') {
    next = {
      ...next,
      versionChanges: Math.max(0, next.versionChanges - 1),
      editing: { ...next.editing, messageId: null },
      detail: { ...next.detail, wanted: true },
    };
  }
  return next;
}

function startRefused(
  state: ThreadPageState,
  event: Extract<ThreadPageEvent, { type: 'start.refused' }>,
): ThreadPageState {
  const { kind, error, claimAt } = event;
  let next: ThreadPageState = { ...state, starts: Math.max(0, state.starts - 1) };
  if (!isQuiet(kind, error)) {
    const prefix = kind === 'send' ? 'Not sent; your message is back in the box.' : undefined;
    next = showNotice(next, error, prefix, event.retryOffered);
  }
  switch (kind) {
    case 'claim':
      // Another tab claimed first (this tab attaches to its turn), or the head is blocked: no new
      // claim until the queue changes.
      return { ...next, claimRefusedAt: claimAt ?? next.facts.queue };
    case 'version':
      // Nothing changed on the server; the editor stays open with the text.
      return { ...next, versionChanges: Math.max(0, next.versionChanges - 1) };
    case 'sendNow':
      if (error.leftWaiting) return leftWaiting(next, error.leftWaiting);
      return { ...next, detail: { ...next.detail, wanted: true } };
    case 'retry':
    case 'decision':
      // The queue or the approval moved on meanwhile (another tab): show where it is now.
      return { ...next, detail: { ...next.detail, wanted: true } };
    case 'send':
      return next;
  }
}

/**
 * F4: a Stop & send the server could not finish after it had paused the queue, and maybe stopped
 * the reply (the database went away, say). The page shows what the answer says: the reply
 * stopped (marked interrupted, no longer running here), the message waiting first in a paused
 * Dock, whose Send now tries again. The thread is not read now (the server may be away); its
 * events bring the rest once it answers, and the stopped turn is not attached to again.
 */
function leftWaiting(state: ThreadPageState, left: StopAndSendLeftWaiting): ThreadPageState {
  const stopped = left.replyStopped ? state.queue.activeTurn : null;
  if (!stopped) return applyQueue(state, { ...state.queue, paused: true });
  const next: ThreadPageState = {
    ...state,
    transcript: markInterrupted(state.transcript, stopped.id, state.replyIds[stopped.id]),
    finished: remember(state.finished, stopped.id),
  };
  return applyQueue(next, { ...next.queue, activeTurn: null, paused: true });
}

function streamOpened(
  state: ThreadPageState,
  event: Extract<ThreadPageEvent, { type: 'stream.opened' }>,
): ThreadPageState {
  const { turnId, kind } = event;
  let next: ThreadPageState = kind === 'attach' ? state : { ...state, starts: Math.max(0, state.starts - 1) };
  // One stream is shown at a time: one still shown ends here (its reader is stopped).
  const previous = next.transcript.live;
  if (previous && previous.turnId !== turnId) {
    next = {
      ...next,
      transcript: endLive(next.transcript),
      finished: remember(next.finished, previous.turnId),
    };
  }
  switch (kind) {
    case 'claim':
    case 'sendNow':
      next = takeFromQueue(next, turnId);
      break;
    case 'retry':
      // It runs again in place of the failed attempt.
      next = { ...takeFromQueue(next, turnId), transcript: removeTurnMessages(next.transcript, turnId) };
      break;
    case 'version':
      next = {
        ...next,
        versionChanges: Math.max(0, next.versionChanges - 1),
        editing: { ...next.editing, messageId: null },
        transcript: { messages: event.keep ?? next.transcript.messages, live: null },
      };
      break;
    default:
      break;
  }
  const origin: StreamOrigin = kind === 'decision' ? 'continued' : kind === 'attach' ? 'attached' : 'own';
  const { user } = event;
  const showUser =
    user !== null &&
    (origin === 'own' ||
      (origin === 'attached' &&
        !hasUserMessageOf(next.transcript.messages, { id: turnId, text: user.text })));
  let transcript = showUser
    ? appendMessages(next.transcript, [
        optimisticUserMessage({ id: turnId, ...user, attachments: [...user.attachments] }),
      ])
    : next.transcript;
  const toolCallIds = next.hitl
    .filter((request) => request.turnId === turnId)
    .map((request) => request.toolCallId);
  transcript = openLive(transcript, { turnId, origin }, toolCallIds);
  return {
    ...next,
    transcript,
    streamError: null,
    threadListStale: next.threadListStale || kind === 'send' || kind === 'version',
  };
}

function streamEnded(
  state: ThreadPageState,
  turnId: string,
  outcome: 'ended' | 'stopped' | 'gone',
  error: string | undefined,
): ThreadPageState {
  const live = state.transcript.live;
  const shown = live?.turnId === turnId ? live : null;
  let next: ThreadPageState = {
    ...state,
    finished: remember(state.finished, turnId),
    // The streamed turn is newer than any detail requested while it streamed.
    facts: { ...state.facts, transcript: state.facts.transcript + 1 },
  };
  if (shown) {
    const reply = shown.reply;
    next = { ...next, transcript: endLive(next.transcript) };
    if (reply && reply.role === 'assistant') {
      next = { ...next, replyIds: rememberReply(next.replyIds, turnId, reply.id) };
    }
    if (outcome === 'ended') {
      next = {
        ...next,
        lastFinished: {
          seq: (next.lastFinished?.seq ?? 0) + 1,
          turnId,
          text: reply ? textOfMessage(reply) : '',
          failed: error !== undefined,
        },
      };
    }
  }
  if (error !== undefined) next = { ...next, streamError: { turnId, message: error } };
  // Whoever stopped it reads the thread afterwards (Stop), or streams the next turn (Stop & send).
  if (outcome === 'stopped' || next.stopping > 0) return next;
  const early = next.earlySettles[turnId];
  if (early) {
    const { [turnId]: _applied, ...rest } = next.earlySettles;
    return applySettled({ ...next, earlySettles: rest }, early);
  }
  // The settle event is on its way while the events stream is open; else read the detail.
  if (next.attached) return { ...next, settleWait: { turnId, timerStarted: false } };
  return { ...next, detail: { ...next.detail, wanted: true } };
}

function stopEnded(
  state: ThreadPageState,
  event: Extract<ThreadPageEvent, { type: 'stop.ended' }>,
): ThreadPageState {
  let next: ThreadPageState = { ...state, stopping: Math.max(0, state.stopping - 1) };
  const turn = event.interrupted?.turn;
  if (turn?.status === 'interrupted') {
    next = { ...next, transcript: markInterrupted(next.transcript, turn.id, next.replyIds[turn.id]) };
  }
  // S3: Stop with items waiting paused the queue; the Dock says so before the next event does.
  if (event.interrupted?.queuePaused && !next.queue.paused) {
    next = applyQueue(next, { ...next.queue, paused: true });
  }
  if (event.error) next = showNotice(next, event.error);
  return event.refetch ? { ...next, detail: { ...next.detail, wanted: true } } : next;
}

// --- the Dock's pick for a merge ---------------------------------------------------------------

function pickToggled(state: ThreadPageState, turnId: string): ThreadPageState {
  const selection = state.selection;
  if (!selection) return state;
  if (selection.includes(turnId)) return { ...state, selection: selection.filter((id) => id !== turnId) };
  return canPick(state, turnId) ? { ...state, selection: [...selection, turnId] } : state;
}

// --- small helpers -----------------------------------------------------------------------------

function showNotice(
  state: ThreadPageState,
  error: Refusal,
  prefix?: string,
  retryOffered = false,
): ThreadPageState {
  // The contract's words for a full queue say what to do about it.
  const words = error.code === 'queue_full' ? errorMessage('queue_full') : error.message;
  return {
    ...state,
    noticesShown: state.noticesShown + 1,
    notice: {
      id: state.noticesShown + 1,
      message: prefix ? `${prefix} ${words}` : words,
      retryable: retryOffered && error.retryable,
    },
  };
}

function remember(ids: readonly string[], id: string): readonly string[] {
  if (ids.includes(id)) return ids;
  return [...ids.slice(-(REMEMBERED_TURNS - 1)), id];
}

function rememberReply(
  replyIds: Readonly<Record<string, string>>,
  turnId: string,
  replyId: string,
): Readonly<Record<string, string>> {
  const entries = Object.entries(replyIds).filter(([id]) => id !== turnId);
  return Object.fromEntries([...entries.slice(-(REMEMBERED_TURNS - 1)), [turnId, replyId]]);
}
