import type { Turn, TurnQueue } from '@chat/contracts';
import { isMovable, withMoves } from './queueOrder';
import type { ThreadPageState } from './state';

/** The queue's rules on the page: applying the server's queue, and when each Dock item runs. */

/**
 * The queue as the server now tells it. Counts as a fact (a detail requested earlier does not
 * undo it). An item that left while being edited closes its editor. A turn waiting for an
 * approval has no stream; once decided it runs again under the same id, so a stream of it this
 * tab saw end is a new one then, and may be attached to.
 */
export function applyQueue(state: ThreadPageState, queue: TurnQueue): ThreadPageState {
  // Older than what this tab knows: its active turn has ended for good. Read the thread again
  // rather than show a reply running that is over (the page would wait on it and claim nothing).
  if (queue.activeTurn && state.endedTurns.includes(queue.activeTurn.id))
    return { ...state, detail: { ...state.detail, wanted: true } };
  const editing = state.editing.queuedTurnId;
  // Picked items that left the queue (or can no longer be merged) drop out of the pick.
  const selection = state.selection?.filter((id) =>
    queue.items.some((turn) => turn.id === id && isMovable(turn)),
  );
  const waiting = queue.activeTurn?.status === 'awaiting_approval' ? queue.activeTurn.id : null;
  return {
    ...state,
    queue,
    selection: selection ?? null,
    facts: { ...state.facts, queue: state.facts.queue + 1 },
    editing:
      editing && !queue.items.some((turn) => turn.id === editing)
        ? { ...state.editing, queuedTurnId: null }
        : state.editing,
    finished:
      waiting && state.finished.includes(waiting)
        ? state.finished.filter((id) => id !== waiting)
        : state.finished,
  };
}

/** The turn left the queue here a moment before the server's next word says so (it runs now). */
export function takeFromQueue(state: ThreadPageState, turnId: string): ThreadPageState {
  if (!state.queue.items.some((turn) => turn.id === turnId)) return state;
  return applyQueue(state, { ...state.queue, items: state.queue.items.filter((turn) => turn.id !== turnId) });
}

/**
 * The waiting items in the order the Dock shows: the server's, with the moves this tab sent and
 * has no answer for yet applied over it (Q13), so a drag or a key shows at once.
 */
export function shownQueueItems(state: ThreadPageState): readonly Turn[] {
  return withMoves(state.queue.items, state.moves);
}

/** An item the Dock may pick for a merge (Q14): one that may move, as merges act on those only. */
export function canPick(state: ThreadPageState, turnId: string): boolean {
  return state.queue.items.some((turn) => turn.id === turnId && isMovable(turn));
}

/** A reply is being produced: on the server, or in this tab. Sends now queue (Q3). */
export function isBusy(state: ThreadPageState): boolean {
  return state.queue.activeTurn !== null || state.transcript.live !== null || state.starts > 0;
}

/**
 * A failed message holds the queue (Q11): it keeps the head until it is retried, edited or removed,
 * and nothing behind it runs meanwhile.
 */
export function isBlockedByFailure(state: ThreadPageState): boolean {
  return shownQueueItems(state)[0]?.status === 'failed';
}

/** The reply waits for a person to approve or deny a tool call; the queue waits meanwhile (Q12). */
export function waitsForApproval(state: ThreadPageState): boolean {
  return state.queue.activeTurn?.status === 'awaiting_approval';
}

const more = (count: number) => `${count} more`;

/**
 * When each waiting item runs, in plain words (screen readers read the same): every item says
 * it, and a paused queue never says anything runs. Pending steers join the running reply and are
 * not counted as running before the items after them.
 */
export function whenItemsRun(state: ThreadPageState): string[] {
  const { paused } = state.queue;
  const items = shownQueueItems(state);
  const headFailed = isBlockedByFailure(state);
  const busy = isBusy(state);
  const approval = waitsForApproval(state);
  let ahead = 0;
  return items.map((turn, index) => {
    if (turn.status === 'steer_pending') return 'Joins the current reply at its next step';
    const before = ahead;
    ahead += 1;
    if (turn.status === 'failed')
      return 'Blocked: this message failed. Retry, edit or remove it to continue.';
    if (headFailed && index > 0) return 'Waits until the failed message is resolved.';
    if (paused)
      return before === 0
        ? 'Paused: resume the queue to run it.'
        : `Paused: after ${more(before)} once resumed.`;
    if (approval)
      return before === 0
        ? 'Waits for the approval in the reply above.'
        : `Waits for the approval, then after ${more(before)}.`;
    if (busy)
      return before === 0
        ? 'Runs after the current reply.'
        : `Runs after the current reply and ${more(before)}.`;
    if (!state.attached) return 'Waiting for this page to reconnect.';
    if (before > 0) return `Runs after ${more(before)}.`;
    if (state.editing.queuedTurnId === turn.id) return 'Waits while you edit it.';
    return 'Starting…';
  });
}
