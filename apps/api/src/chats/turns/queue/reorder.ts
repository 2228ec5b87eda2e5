import { fixedPlaceOf, type QueuePlace } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { notEligible } from '../../../platform/errors';
import { listWaitingTurns, requireWaitingTurn, setQueuePositions } from './repository';

/** Where a move puts an item: next to a neighbour, or first among the items that may move. */
export type Destination = QueuePlace | 'front';

/**
 * Q13: moves a waiting item, under the thread lock. Only the items the order's third rule sorts
 * may move, and only among themselves: a failed head and the steers keep their place at the
 * front, so moving one, or moving anything before one, is refused with the reason
 * (`not_eligible`: `head_failed`, `steer_first`); just after the last of them is the first place
 * an item can have. The movable items trade their stored places, so the set of values stays the
 * same and a later send still goes last. Naming the place the item already has changes nothing
 * (`changed: false`): a retry, or a second tab's same move, is harmless.
 */
export async function moveWaitingTurn(
  tx: Queryable,
  threadId: string,
  turnId: string,
  destination: Destination,
): Promise<{ turn: TurnRow; changed: boolean }> {
  const waiting = await listWaitingTurns(tx, threadId);
  const turn = await requireWaitingTurn(tx, threadId, waiting, turnId);
  const fixed = fixedPlaceOf(turn);
  if (fixed) throw notEligible(fixed);
  const movable = waiting.filter((item) => fixedPlaceOf(item) === null);
  const others = movable.filter((item) => item.id !== turnId);
  const index = await indexAmong(tx, threadId, waiting, others, turnId, destination);
  if (index === null) return { turn, changed: false };
  const order = [...others.slice(0, index), turn, ...others.slice(index)];
  const places = movable.map((item) => item.queuePosition).sort((a, b) => a - b);
  const changes = order.flatMap((item, at) => {
    const position = places[at] as number;
    return item.queuePosition === position ? [] : [{ turnId: item.id, position }];
  });
  await setQueuePositions(tx, changes);
  const moved = changes.find((change) => change.turnId === turnId);
  return { turn: moved ? { ...turn, queuePosition: moved.position } : turn, changed: changes.length > 0 };
}

/**
 * The index the item takes among the other movable items (`others`, in queue order), or null when
 * the destination is where it is: it names the item itself.
 */
async function indexAmong(
  tx: Queryable,
  threadId: string,
  waiting: readonly TurnRow[],
  others: readonly TurnRow[],
  turnId: string,
  destination: Destination,
): Promise<number | null> {
  if (destination === 'front') return 0;
  const before = 'beforeTurnId' in destination;
  const neighbourId = before ? destination.beforeTurnId : destination.afterTurnId;
  if (neighbourId === turnId) return null;
  const neighbour = await requireWaitingTurn(tx, threadId, waiting, neighbourId, 'neighbour');
  const fixed = fixedPlaceOf(neighbour);
  if (fixed) {
    // The fixed items come first in queue order: just after the last of them is the front.
    const lastFixed = waiting.filter((item) => fixedPlaceOf(item) !== null).at(-1);
    if (before || neighbour.id !== lastFixed?.id) throw notEligible(fixed);
    return 0;
  }
  const at = others.findIndex((item) => item.id === neighbourId);
  return before ? at : at + 1;
}

/**
 * Q11: the place an edited failed head takes when it waits again: first among the items that may
 * move, where it was before it ran (its claim gave it the next place in the run order, behind
 * them). Undefined when no other item may move: its own place will do.
 */
export async function frontPlace(tx: Queryable, threadId: string): Promise<number | undefined> {
  const movable = (await listWaitingTurns(tx, threadId)).filter((item) => fixedPlaceOf(item) === null);
  if (movable.length === 0) return undefined;
  return Math.min(...movable.map((item) => item.queuePosition)) - 1;
}
