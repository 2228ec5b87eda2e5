import type { Turn } from '@chat/contracts';
import { isReconnecting } from './reducer';
import type { AwayNotification, ThreadPageState } from './state';

/**
 * The requests and timers the chat page's state calls for. This is the one place that decides
 * them: the store asks after every event, runs what it gets, and each run starts with an event
 * that takes it off this list (so nothing runs twice). "Who reconciles" is never a question of
 * which event came first: whatever came, the state says what should happen next.
 */
export type ThreadPageEffect =
  /** Read `GET /api/threads/:id` (the first load too). */
  | { type: 'readDetail' }
  /** The first load failed while the API is away: try again after a backoff. */
  | { type: 'retryLoad' }
  /** Follow a turn that runs on the server and is not shown here (another tab's, or after a reload). */
  | { type: 'attach'; turn: Turn }
  /** Claim the queue head (Q10); `at` is the queue fact it was decided at. */
  | { type: 'claim'; head: Turn; at: number }
  /** A stream ended before its settle event: wait for it a little, then read the detail. */
  | { type: 'waitForSettle'; turnId: string }
  /** The sidebar's thread list may be out of date (a title, a deleted chat). */
  | { type: 'refreshThreadList' }
  /** A reply or the queue finished while the page is hidden: a browser notification, if allowed (Q15). */
  | { type: 'notify'; notification: AwayNotification };

export function effectsOf(state: ThreadPageState): ThreadPageEffect[] {
  const effects: ThreadPageEffect[] = [];
  if (state.threadListStale) effects.push({ type: 'refreshThreadList' });
  if (state.deleted) return effects;
  for (const notification of state.away.notifications) effects.push({ type: 'notify', notification });
  if (state.detail.wanted && state.detail.inFlight === 0) effects.push({ type: 'readDetail' });
  if (
    isReconnecting(state) &&
    !state.load.retryScheduled &&
    !state.detail.wanted &&
    state.detail.inFlight === 0
  ) {
    effects.push({ type: 'retryLoad' });
  }
  if (state.settleWait && !state.settleWait.timerStarted) {
    effects.push({ type: 'waitForSettle', turnId: state.settleWait.turnId });
  }
  const turn = turnEffectOf(state);
  if (turn) effects.push(turn);
  return effects;
}

/**
 * Whether this tab should follow a running turn or claim the queue head. It waits while anything
 * may change the transcript a stream would append to: the first load, a detail read out or
 * wanted (another tab's edit sends `thread.changed`, then `turn.started`), a start of this tab
 * (an active turn it does not know yet may be its own), a Stop, a stream shown, or a settle
 * event still on its way.
 */
function turnEffectOf(state: ThreadPageState): ThreadPageEffect | null {
  if (state.load.phase !== 'ready') return null;
  if (state.starts > 0 || state.stopping > 0) return null;
  if (state.detail.wanted || state.detail.inFlight > 0) return null;
  if (state.transcript.live !== null || state.settleWait !== null) return null;
  const active = state.queue.activeTurn;
  // A turn waiting for an approval has no stream to follow, and blocks the queue (Q12).
  if (active?.status === 'awaiting_approval') return null;
  if (active) return state.finished.includes(active.id) ? null : { type: 'attach', turn: active };
  return claimableHead(state);
}

/**
 * Q10: a page that is attached claims the head whenever nothing runs, the queue is not paused,
 * and the head is `queued` (not failed, not a steer, not being edited: its old text must not run).
 * A claim the server refused is not repeated until the queue changes.
 */
function claimableHead(state: ThreadPageState): ThreadPageEffect | null {
  const head = state.queue.items[0];
  if (!state.attached || state.queue.paused || head?.status !== 'queued') return null;
  if (state.editing.queuedTurnId === head.id) return null;
  if (state.claimRefusedAt === state.facts.queue) return null;
  return { type: 'claim', head, at: state.facts.queue };
}
