import { fixedPlaceOf, type QueuePlace, type Turn } from '@chat/contracts';

/**
 * The Dock's order (Q13) as pure functions: a move applied to a list, the places a key, a drop,
 * "Run next" or an undo name, and the moves this tab sent but the server has not answered yet.
 * Which items may move is the contract's rule (`fixedPlaceOf`): a failed head and the steers keep
 * the front, and moves happen among the other items.
 */

/** A move this tab asked for: the item, and where it goes. */
export interface QueueMove {
  turnId: string;
  place: QueuePlace;
}

/** How a person moved an item: dragged, Alt+Up/Down, Move up/down in its menu, or Run next. */
export type MoveHow = 'drag' | 'key' | 'menu' | 'next';

export function isMovable(turn: Pick<Turn, 'status' | 'steer'>): boolean {
  return fixedPlaceOf(turn) === null;
}

/**
 * `items` with one move applied, as the server applies it: a move whose item or neighbour is not
 * there, or that would put the item ahead of one that keeps the front, leaves the list as it is
 * (the server refuses those); a move to where the item already is changes nothing.
 */
export function withMove<T extends Pick<Turn, 'id' | 'status' | 'steer'>>(
  items: readonly T[],
  move: QueueMove,
): readonly T[] {
  const moved = items.find((item) => item.id === move.turnId);
  if (!moved || !isMovable(moved)) return items;
  const before = 'beforeTurnId' in move.place;
  const neighbourId = 'beforeTurnId' in move.place ? move.place.beforeTurnId : move.place.afterTurnId;
  if (neighbourId === moved.id) return items;
  const others = items.filter((item) => item.id !== moved.id);
  const at = others.findIndex((item) => item.id === neighbourId);
  if (at < 0) return items;
  const index = before ? at : at + 1;
  // Nothing goes ahead of an item that keeps the front.
  if (others.slice(index).some((item) => !isMovable(item))) return items;
  const next = [...others.slice(0, index), moved, ...others.slice(index)];
  return next.every((item, position) => item === items[position]) ? items : next;
}

/** `items` with the moves applied in order (a move already made on the server changes nothing again). */
export function withMoves<T extends Pick<Turn, 'id' | 'status' | 'steer'>>(
  items: readonly T[],
  moves: readonly QueueMove[],
): readonly T[] {
  return moves.reduce((current, move) => withMove(current, move), items);
}

/** The moves an item of `items` (shown in this order) can make: one up, one down, to the front. */
export interface ItemMoves {
  up: QueuePlace | null;
  down: QueuePlace | null;
  /** "Run next": first among the items that may move (right after a failed head or steers). */
  front: QueuePlace | null;
}

export function movesOf(items: readonly Pick<Turn, 'id' | 'status' | 'steer'>[], turnId: string): ItemMoves {
  const movable = items.filter(isMovable);
  const at = movable.findIndex((item) => item.id === turnId);
  if (at < 0) return { up: null, down: null, front: null };
  const previous = movable[at - 1];
  const next = movable[at + 1];
  const first = movable[0];
  return {
    up: previous ? { beforeTurnId: previous.id } : null,
    down: next ? { afterTurnId: next.id } : null,
    front: first && at > 0 ? { beforeTurnId: first.id } : null,
  };
}

/**
 * The place an item dropped at `to` (its index in the list after the drop) names, from the list
 * as shown before it was dragged from `from`: after the item now just before it, or, dropped
 * first, before the one now after it. Null when it did not move, or landed ahead of an item
 * that keeps the front.
 */
export function placeOfDrop(
  items: readonly Pick<Turn, 'id' | 'status' | 'steer'>[],
  from: number,
  to: number,
): QueuePlace | null {
  const moved = items[from];
  if (!moved || from === to || !isMovable(moved)) return null;
  const others = items.filter((_, index) => index !== from);
  if (others.slice(to).some((item) => !isMovable(item))) return null;
  const previous = others[to - 1];
  if (previous) return { afterTurnId: previous.id };
  const next = others[to];
  return next ? { beforeTurnId: next.id } : null;
}

/**
 * Where an item goes back to (an undo), from the order of ids before the change and the items
 * there are now: just after the nearest item that was before it and is still there to move
 * among, or else first among the items that may move. Null when no other item could say where.
 * The place never names the item itself, so it serves an item sent again under a new id.
 */
export function placeBack(
  order: readonly string[],
  turnId: string,
  now: readonly Pick<Turn, 'id' | 'status' | 'steer'>[],
): QueuePlace | null {
  const movable = now.filter((item) => isMovable(item) && item.id !== turnId).map((item) => item.id);
  const at = order.indexOf(turnId);
  for (let index = at - 1; index >= 0; index--) {
    const id = order[index] as string;
    if (movable.includes(id)) return { afterTurnId: id };
  }
  const first = movable[0];
  return first ? { beforeTurnId: first } : null;
}
