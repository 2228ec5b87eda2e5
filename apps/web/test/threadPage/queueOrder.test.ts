import { describe, expect, it } from 'vitest';
import { shownQueueItems, whenItemsRun } from '../../app/threadPage/queue';
import { movesOf, placeBack, placeOfDrop, withMove } from '../../app/threadPage/queueOrder';
import { dockView, movedAnnouncement } from '../../app/threadPage/views';
import { detail, Page, queueChanged, queueOf, turn } from '../support/threadFacts';

const ids = (items: readonly { id: string }[]) => items.map((item) => item.id);
const a = turn('a', 'queued');
const b = turn('b', 'queued');
const c = turn('c', 'queued');
const d = turn('d', 'queued');
const four = [a, b, c, d] as const;
const failed = turn('f', 'failed');
const steer = turn('s', 'steer_pending', 'faster', { steer: true });
const requeuedSteer = turn('r', 'queued', 'shorter', { steer: true });

const refused = {
  message: 'This message is no longer in the queue.',
  status: 409,
  code: 'not_queued',
  retryable: false,
};

describe('a move applied to the Dock’s list, as the server applies it (Q13)', () => {
  it('puts the item just before or just after its neighbour', () => {
    expect(ids(withMove(four, { turnId: 'd', place: { beforeTurnId: 'a' } }))).toEqual(['d', 'a', 'b', 'c']);
    expect(ids(withMove(four, { turnId: 'a', place: { afterTurnId: 'c' } }))).toEqual(['b', 'c', 'a', 'd']);
  });

  it('changes nothing when the item is already there, is gone, or names itself', () => {
    expect(withMove(four, { turnId: 'b', place: { afterTurnId: 'a' } })).toBe(four);
    expect(withMove(four, { turnId: 'x', place: { afterTurnId: 'a' } })).toBe(four);
    expect(withMove(four, { turnId: 'b', place: { afterTurnId: 'gone' } })).toBe(four);
    expect(withMove(four, { turnId: 'b', place: { beforeTurnId: 'b' } })).toBe(four);
  });

  it('never moves a failed head or a steer, nor anything ahead of them; right after the last is the front', () => {
    const items = [failed, steer, requeuedSteer, a, b];
    expect(withMove(items, { turnId: 'f', place: { afterTurnId: 'b' } })).toBe(items);
    expect(withMove(items, { turnId: 'r', place: { afterTurnId: 'b' } })).toBe(items);
    expect(withMove(items, { turnId: 'b', place: { beforeTurnId: 'f' } })).toBe(items);
    expect(withMove(items, { turnId: 'b', place: { afterTurnId: 's' } })).toBe(items);
    expect(ids(withMove(items, { turnId: 'b', place: { afterTurnId: 'r' } }))).toEqual([
      'f',
      's',
      'r',
      'b',
      'a',
    ]);
  });
});

describe('the places a key, "Run next", a drop and an undo name', () => {
  it('up, down and to the front among the items that may move', () => {
    const items = [failed, a, b, c];
    expect(movesOf(items, 'b')).toEqual({
      up: { beforeTurnId: 'a' },
      down: { afterTurnId: 'c' },
      front: { beforeTurnId: 'a' },
    });
    // The first that may move has no up and no front (a failed head stays ahead of it).
    expect(movesOf(items, 'a')).toEqual({ up: null, down: { afterTurnId: 'b' }, front: null });
    expect(movesOf(items, 'c').down).toBeNull();
    expect(movesOf(items, 'f')).toEqual({ up: null, down: null, front: null });
  });

  it('a drop names the item before it, or the one after it when dropped first', () => {
    expect(placeOfDrop(four, 3, 0)).toEqual({ beforeTurnId: 'a' });
    expect(placeOfDrop(four, 0, 2)).toEqual({ afterTurnId: 'c' });
    expect(placeOfDrop(four, 1, 1)).toBeNull();
    // Dropped ahead of a steer: no move; right after it: after the steer.
    expect(placeOfDrop([steer, a, b], 2, 0)).toBeNull();
    expect(placeOfDrop([steer, a, b], 2, 1)).toEqual({ afterTurnId: 's' });
    expect(placeOfDrop([steer, a, b], 0, 2)).toBeNull();
  });

  it('an undo goes back after the nearest earlier item still there, else to the front', () => {
    const before = ['a', 'b', 'c', 'd'];
    // c was moved to the front: back after b.
    expect(placeBack(before, 'c', [c, a, b, d])).toEqual({ afterTurnId: 'b' });
    // b is gone meanwhile: after a.
    expect(placeBack(before, 'c', [c, a, d])).toEqual({ afterTurnId: 'a' });
    // It was first: before the first that may move now (a failed head stays ahead).
    expect(placeBack(before, 'a', [failed, b, c, a])).toEqual({ beforeTurnId: 'b' });
    // A deleted item sent again under a new id goes where the old one was.
    expect(placeBack(before, 'b', [a, c, d, turn('b2', 'queued')])).toEqual({ afterTurnId: 'a' });
    expect(placeBack(['a'], 'a', [a])).toBeNull();
  });
});

describe('moves in the page state: shown at once, answered in order', () => {
  const opened = () => Page.opened(detail([], queueOf(turn('run', 'running'), [...four])));

  it('shows a move before the server answers, and keeps showing the server’s order after', () => {
    const page = opened().feed({
      type: 'queueMove.requested',
      move: { turnId: 'd', place: { beforeTurnId: 'a' } },
    });
    expect(ids(dockView(page.state).items.map((item) => item.turn))).toEqual(['d', 'a', 'b', 'c']);
    expect(page.state.queue.items.map((item) => item.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(dockView(page.state).items[0]).toMatchObject({ position: 1, isHead: true });
    expect(whenItemsRun(page.state)[0]).toBe('Runs after the current reply.');

    page.feed({ type: 'queueMove.answered', turnQueue: queueOf(turn('run', 'running'), [d, a, b, c]) });
    expect(page.state.moves).toEqual([]);
    expect(ids(shownQueueItems(page.state))).toEqual(['d', 'a', 'b', 'c']);
  });

  it('keeps a second move on top while the first is answered, and an event meanwhile changes nothing shown', () => {
    const page = opened().feed(
      { type: 'queueMove.requested', move: { turnId: 'd', place: { beforeTurnId: 'a' } } },
      { type: 'queueMove.requested', move: { turnId: 'a', place: { afterTurnId: 'b' } } },
    );
    expect(ids(shownQueueItems(page.state))).toEqual(['d', 'b', 'a', 'c']);
    // Another tab's events bring the first move's result: applying the pending moves again is harmless.
    page.feed(queueChanged(queueOf(turn('run', 'running'), [d, a, b, c])));
    expect(ids(shownQueueItems(page.state))).toEqual(['d', 'b', 'a', 'c']);
    page.feed({ type: 'queueMove.answered', turnQueue: queueOf(turn('run', 'running'), [d, a, b, c]) });
    expect(page.state.moves).toHaveLength(1);
    expect(ids(shownQueueItems(page.state))).toEqual(['d', 'b', 'a', 'c']);
  });

  it('a refused move goes back to the server’s order and says why', () => {
    const page = opened().feed(
      { type: 'queueMove.requested', move: { turnId: 'd', place: { beforeTurnId: 'a' } } },
      { type: 'queueMove.refused', error: refused },
    );
    expect(ids(shownQueueItems(page.state))).toEqual(['a', 'b', 'c', 'd']);
    expect(page.state.notice?.message).toBe('This message is no longer in the queue.');
  });

  it('announces the new place for screen readers', () => {
    expect(movedAnnouncement([d, a, b, c], 'd')).toBe('Moved to position 1 of 4.');
    expect(movedAnnouncement([a, b], 'x')).toBe('Moved.');
  });
});

describe('what the Dock offers each item', () => {
  it('while a reply runs: Stop & send this on items behind the head, when nothing keeps the front', () => {
    const page = Page.opened(detail([], queueOf(turn('run', 'running'), [a, b, c])));
    const view = dockView(page.state);
    expect(view.items.map((item) => item.stopAndSend)).toEqual([false, true, true]);
    expect(view.reorderable).toBe(true);

    const withSteer = Page.opened(detail([], queueOf(turn('run', 'running'), [steer, a, b])));
    expect(dockView(withSteer.state).items.map((item) => [item.movable, item.stopAndSend])).toEqual([
      [false, false],
      [true, false],
      [true, false],
    ]);
  });

  it('idle: no Stop & send this; a failed head and one other item cannot be reordered', () => {
    const idle = Page.opened(detail([], queueOf(null, [a, b], true)));
    expect(dockView(idle.state).items.map((item) => item.stopAndSend)).toEqual([false, false]);
    const blocked = Page.opened(detail([], queueOf(null, [failed, a])));
    expect(dockView(blocked.state).reorderable).toBe(false);
  });
});

describe('picking items to merge (Q14)', () => {
  const opened = () => Page.opened(detail([], queueOf(turn('run', 'running'), [steer, a, b, c])));

  it('starts with one item, toggles others, and never picks a steer or a failed head', () => {
    const page = opened().feed({ type: 'queueSelection.started', turnId: 'b' });
    expect(page.state.selection).toEqual(['b']);
    page.feed(
      { type: 'queueSelection.toggled', turnId: 'c' },
      { type: 'queueSelection.toggled', turnId: 's' },
      { type: 'queueSelection.toggled', turnId: 'b' },
    );
    expect(page.state.selection).toEqual(['c']);
    expect(dockView(page.state)).toMatchObject({ picking: true, picked: 1 });
    expect(opened().feed({ type: 'queueSelection.started', turnId: 's' }).state.selection).toBeNull();
  });

  it('drops an item that leaves the queue from the pick', () => {
    const page = opened().feed(
      { type: 'queueSelection.started', turnId: 'a' },
      { type: 'queueSelection.toggled', turnId: 'b' },
      queueChanged(queueOf(turn('run', 'running'), [steer, b, c])),
    );
    expect(page.state.selection).toEqual(['b']);
  });

  it('ends the pick once merged; a refusal keeps it and says why', () => {
    const page = opened().feed(
      { type: 'queueSelection.started', turnId: 'a' },
      { type: 'queueSelection.toggled', turnId: 'b' },
      { type: 'queueMerge.requested' },
    );
    expect(dockView(page.state).merging).toBe(true);
    page.feed({
      type: 'queueMerge.refused',
      error: { ...refused, code: 'too_large', status: 413, message: 'Too long.' },
    });
    expect(page.state).toMatchObject({ merging: false, selection: ['a', 'b'] });
    expect(page.state.notice?.message).toBe('Too long.');

    const merged = turn('m', 'queued', 'text of a\n\ntext of b');
    page.feed(
      { type: 'queueMerge.requested' },
      {
        type: 'queueMerge.answered',
        turnQueue: queueOf(turn('run', 'running'), [steer, merged, c]),
      },
    );
    expect(page.state).toMatchObject({ merging: false, selection: null });
    expect(ids(shownQueueItems(page.state))).toEqual(['s', 'm', 'c']);
  });
});
