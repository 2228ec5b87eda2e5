import type { HitlRequest, ThreadEvent } from '@chat/contracts';
import { type ChatUIMessage, textOfMessage, toChatUIMessages } from '../utils/chatMessages';
import type { AwayNotification, ThreadPageState } from './state';
import { firstSentence } from './transcript';

/**
 * Hearing about a chat that worked while the person was away (Q15), as pure functions of the
 * page's state: which replies finished while the page was hidden (the title's count, the
 * notifications), and where the "While you were away" divider goes when they come back.
 */

/** The latest reply the transcript holds whole (a reply still streaming is not seen yet). */
export function latestSettledReplyId(state: ThreadPageState): string | null {
  return state.transcript.messages.findLast((message) => message.role === 'assistant')?.id ?? null;
}

/**
 * The first reply after the one the person last saw: the divider goes above it. `seen` null: they
 * saw the chat before it had any reply. Null when there is no such reply, or when the reply they
 * saw is not in the transcript any more (another version shows, say): no divider rather than a
 * wrong one.
 */
export function firstReplyAfter(messages: readonly ChatUIMessage[], seen: string | null): string | null {
  const from = seen === null ? 0 : messages.findIndex((message) => message.id === seen) + 1;
  if (from === 0 && seen !== null) return null;
  return messages.slice(from).find((message) => message.role === 'assistant')?.id ?? null;
}

/** The page became visible or hidden. */
export function visibilityChanged(state: ThreadPageState, visible: boolean): ThreadPageState {
  if (state.away.visible === visible) return state;
  if (!visible) {
    // What the person saw last is what the transcript holds as they leave (a page opened hidden
    // showed nothing yet: it keeps what this browser remembered).
    const seenReplyId = state.load.phase === 'ready' ? latestSettledReplyId(state) : state.away.seenReplyId;
    return { ...state, away: { ...state.away, visible, seenReplyId, unseen: 0 } };
  }
  const { seenReplyId } = state.away;
  // Replies finished while it was hidden (the transcript may not hold them yet: a read is on its way).
  const divider =
    state.away.unseen > 0 && seenReplyId !== undefined ? { after: seenReplyId } : state.away.divider;
  return { ...state, away: { ...state.away, visible, unseen: 0, notifications: [], divider } };
}

/**
 * The first detail arrived: a person who saw this chat before (in this browser) and comes back to
 * replies they have not seen gets the divider above the first of them.
 */
export function firstLoaded(state: ThreadPageState): ThreadPageState {
  const { seenReplyId } = state.away;
  if (seenReplyId === undefined || firstReplyAfter(state.transcript.messages, seenReplyId) === null)
    return state;
  return { ...state, away: { ...state.away, divider: { after: seenReplyId } } };
}

/** The reply the divider goes above, in the transcript as it is now (null: no divider). */
export function awayDividerBefore(state: ThreadPageState): string | null {
  const { divider } = state.away;
  return divider ? firstReplyAfter(state.transcript.messages, divider.after) : null;
}

/**
 * A turn settled while the page is hidden: one more reply finished unseen (the title counts it),
 * a notification says so, and another says when nothing is left to run.
 */
export function settledWhileAway(
  state: ThreadPageState,
  event: Extract<ThreadEvent, { type: 'turn.settled' }>,
): ThreadPageState {
  if (state.away.visible) return state;
  const reply = event.messages?.findLast((message) => message.role === 'assistant');
  const text = reply ? textOfMessage(toChatUIMessages([reply])[0] as ChatUIMessage) : '';
  const failed = event.turn.status === 'failed';
  const added: AwayNotification[] = [
    { kind: failed ? 'replyFailed' : 'replyFinished', id: 0, text: firstSentence(text, 140) },
  ];
  const { activeTurn, items } = event.turnQueue;
  if (!activeTurn && items.length === 0) added.push({ kind: 'queueEmpty', id: 0, text: '' });
  let seq = state.away.notificationSeq;
  const numbered = added.map((notification) => ({ ...notification, id: ++seq }));
  return {
    ...state,
    away: {
      ...state.away,
      unseen: state.away.unseen + 1,
      notifications: [...state.away.notifications, ...numbered],
      notificationSeq: seq,
    },
  };
}

/**
 * The requests for a person's approval changed while the page is hidden: each one that newly
 * waits is a notification (the reply and the queue behind it wait for the person, H3), once.
 */
export function approvalsWhileAway(state: ThreadPageState, hitl: readonly HitlRequest[]): ThreadPageState {
  if (state.away.visible) return state;
  const known = new Set(
    state.hitl.filter((request) => request.status === 'pending').map((request) => request.id),
  );
  const fresh = hitl.filter((request) => request.status === 'pending' && !known.has(request.id));
  if (fresh.length === 0) return state;
  let seq = state.away.notificationSeq;
  const added: AwayNotification[] = fresh.map((request) => ({
    kind: 'approvalNeeded',
    id: ++seq,
    text: request.toolName,
  }));
  return {
    ...state,
    away: { ...state.away, notifications: [...state.away.notifications, ...added], notificationSeq: seq },
  };
}

/** A notification went out (or could not): it is off the list. */
export function notificationShown(state: ThreadPageState, id: number): ThreadPageState {
  const notifications = state.away.notifications.filter((notification) => notification.id !== id);
  return { ...state, away: { ...state.away, notifications } };
}
