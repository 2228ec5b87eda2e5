import { describe, expect, it } from 'vitest';
import { awayDividerBefore } from '../../app/threadPage/away';
import { dockView, pageTitle, seenReplyToRemember } from '../../app/threadPage/views';
import {
  approval,
  detail,
  exchange,
  Page,
  queueOf,
  server,
  settled,
  THREAD,
  turn,
} from '../support/threadFacts';

/** Q15: hearing about a chat that worked while the person was away, and the Dock's switch. */

const hidden = { type: 'page.visibility', visible: false } as const;
const visible = { type: 'page.visibility', visible: true } as const;

/** An open page whose chat has one finished exchange and `b`, `c` queued behind `a` (running elsewhere). */
function openWithQueue(): Page {
  return Page.opened(
    detail(
      [...exchange('earlier')],
      queueOf(turn('a', 'running'), [turn('b', 'queued'), turn('c', 'queued')]),
    ),
  );
}

describe('a hidden tab', () => {
  it('counts the replies that finish unseen in its title and notifies each, then the empty queue', () => {
    const page = openWithQueue();
    page.feed(hidden);
    page.feed(
      settled(
        turn('a', 'completed'),
        queueOf(turn('b', 'running'), [turn('c', 'queued')]),
        exchange('a', 'First answer. More.'),
      ),
    );
    expect(pageTitle(page.state, 'A chat')).toBe('(1) A chat');
    expect(page.effects().filter((effect) => effect.type === 'notify')).toEqual([
      { type: 'notify', notification: { id: 1, kind: 'replyFinished', text: 'First answer.' } },
    ]);
    page.feed({ type: 'notification.shown', id: 1 });
    expect(page.effectTypes()).not.toContain('notify');

    page.feed(settled(turn('b', 'completed'), queueOf(turn('c', 'running')), exchange('b')));
    page.feed({ type: 'notification.shown', id: 2 });
    page.feed(settled(turn('c', 'completed'), queueOf(null), exchange('c', 'Last one.')));
    expect(pageTitle(page.state, 'A chat')).toBe('(3) A chat');
    expect(page.state.away.notifications.map((notification) => notification.kind)).toEqual([
      'replyFinished',
      'queueEmpty',
    ]);
  });

  it('says a reply failed rather than finished', () => {
    const page = openWithQueue().feed(hidden);
    page.feed(
      settled(turn('a', 'failed'), queueOf(null, [turn('a', 'failed'), turn('b', 'queued')]), exchange('a')),
    );
    expect(page.state.away.notifications.map((notification) => notification.kind)).toEqual(['replyFailed']);
  });

  it('says the chat is blocked, not a count, once a failed message holds the queue, and the plain title when it comes back', () => {
    const page = openWithQueue().feed(hidden);
    page.feed(
      settled(
        turn('a', 'completed'),
        queueOf(turn('b', 'running'), [turn('c', 'queued')]),
        exchange('a', 'First answer.'),
      ),
    );
    expect(pageTitle(page.state, 'A chat')).toBe('(1) A chat');
    page.feed(settled(turn('b', 'failed'), queueOf(null, [turn('b', 'failed'), turn('c', 'queued')])));
    expect(pageTitle(page.state, 'A chat')).toBe('Blocked · A chat');
    page.feed(visible);
    expect(pageTitle(page.state, 'A chat')).toBe('A chat');
    // Leaving again with the failure still there: the title says so at once.
    page.feed(hidden);
    expect(pageTitle(page.state, 'A chat')).toBe('Blocked · A chat');
  });

  it('says an approval is needed, in the title and one notification, while the reply waits for one, and the plain title once decided', () => {
    const page = openWithQueue().feed(hidden);
    const asked = server({
      type: 'hitl.changed',
      threadId: THREAD,
      hitl: [{ ...approval('r', 'a'), toolName: 'save_note' }],
      turnQueue: queueOf(turn('a', 'awaiting_approval'), [turn('b', 'queued'), turn('c', 'queued')]),
    });
    page.feed(asked);
    expect(pageTitle(page.state, 'A chat')).toBe('Approval needed · A chat');
    expect(page.state.away.notifications).toEqual([{ kind: 'approvalNeeded', id: 1, text: 'save_note' }]);
    // The same request heard again (another tab's event, a re-read) is not a second notification.
    page.feed({ type: 'notification.shown', id: 1 }, asked);
    expect(page.state.away.notifications).toEqual([]);
    // Decided in another tab: the reply runs on, the title is plain again.
    page.feed(
      server({
        type: 'hitl.changed',
        threadId: THREAD,
        hitl: [{ ...approval('r', 'a'), status: 'approved' }],
        turnQueue: queueOf(turn('a', 'running'), [turn('b', 'queued'), turn('c', 'queued')]),
      }),
    );
    expect(pageTitle(page.state, 'A chat')).toBe('A chat');
  });

  it('neither counts nor notifies while the page is visible', () => {
    const visiblePage = openWithQueue();
    visiblePage.feed(
      server({
        type: 'hitl.changed',
        threadId: THREAD,
        hitl: [approval('r', 'a')],
        turnQueue: queueOf(turn('a', 'awaiting_approval')),
      }),
    );
    expect(pageTitle(visiblePage.state, 'A chat')).toBe('A chat');
    expect(visiblePage.state.away.notifications).toEqual([]);

    const page = openWithQueue();
    page.feed(settled(turn('a', 'completed'), queueOf(null), exchange('a')));
    expect(pageTitle(page.state, 'A chat')).toBe('A chat');
    expect(page.effectTypes()).not.toContain('notify');
  });

  it('shows "While you were away" above the first reply it did not see when it becomes visible, and the title loses its count', () => {
    const page = openWithQueue();
    page.feed(hidden);
    page.feed(
      settled(turn('a', 'completed'), queueOf(turn('b', 'running'), [turn('c', 'queued')]), exchange('a')),
    );
    page.feed(settled(turn('b', 'completed'), queueOf(turn('c', 'running')), exchange('b')));
    page.feed(visible);
    // The tab reads the detail (the settles could not be applied to what it showed).
    page.readDetail(
      detail([...exchange('earlier'), ...exchange('a'), ...exchange('b')], queueOf(turn('c', 'running'))),
    );
    expect(awayDividerBefore(page.state)).toBe('reply-a');
    expect(pageTitle(page.state, 'A chat')).toBe('A chat');
    expect(page.state.away.notifications).toEqual([]);
    // Writing again puts it behind them.
    page.feed({ type: 'start.requested', kind: 'send' });
    expect(awayDividerBefore(page.state)).toBeNull();
  });

  it('shows no divider when nothing finished while it was hidden', () => {
    const page = openWithQueue().feed(hidden, visible);
    expect(awayDividerBefore(page.state)).toBeNull();
  });
});

describe('coming back to a chat after closing it', () => {
  it('puts the divider above the first reply after the last one this browser showed', () => {
    const page = new Page().feed(
      { type: 'seen.restored', replyId: 'reply-earlier' },
      { type: 'events.connected' },
    );
    page.readDetail(detail([...exchange('earlier'), ...exchange('a'), ...exchange('b')]));
    expect(awayDividerBefore(page.state)).toBe('reply-a');
  });

  it('puts it above the first reply of a chat seen before it had any', () => {
    const page = new Page().feed({ type: 'seen.restored', replyId: null }, { type: 'events.connected' });
    page.readDetail(detail([...exchange('a'), ...exchange('b')]));
    expect(awayDividerBefore(page.state)).toBe('reply-a');
  });

  it('shows none when nothing is new, when this browser never showed the chat, or when the reply seen is gone', () => {
    const same = new Page().feed({ type: 'seen.restored', replyId: 'reply-b' }, { type: 'events.connected' });
    same.readDetail(detail([...exchange('a'), ...exchange('b')]));
    expect(awayDividerBefore(same.state)).toBeNull();
    const first = Page.opened(detail([...exchange('a')]));
    expect(awayDividerBefore(first.state)).toBeNull();
    // Nothing new at the first load: a reply that finishes while the person watches gets no divider.
    same.feed(settled(turn('c', 'completed'), queueOf(null)));
    same.readDetail(detail([...exchange('a'), ...exchange('b'), ...exchange('c')]));
    expect(awayDividerBefore(same.state)).toBeNull();
    const gone = new Page().feed(
      { type: 'seen.restored', replyId: 'reply-other-version' },
      { type: 'events.connected' },
    );
    gone.readDetail(detail([...exchange('a')]));
    expect(awayDividerBefore(gone.state)).toBeNull();
  });

  it('keeps what this browser remembered when the chat opens in a hidden tab', () => {
    const page = new Page().feed({ type: 'seen.restored', replyId: 'reply-a' }, hidden, {
      type: 'events.connected',
    });
    page.readDetail(detail([...exchange('a'), ...exchange('b')]));
    page.feed(visible);
    expect(awayDividerBefore(page.state)).toBe('reply-b');
  });

  it('does not move the divider on later reads', () => {
    const page = new Page().feed({ type: 'seen.restored', replyId: 'reply-a' }, { type: 'events.connected' });
    page.readDetail(detail([...exchange('a'), ...exchange('b')]));
    page.feed({ type: 'server', event: { type: 'thread.changed', threadId: THREAD } });
    page.readDetail(detail([...exchange('a'), ...exchange('b'), ...exchange('c')]));
    expect(awayDividerBefore(page.state)).toBe('reply-b');
  });

  it('remembers the latest whole reply while visible, nothing while hidden', () => {
    const page = Page.opened(detail([...exchange('a')]));
    expect(seenReplyToRemember(page.state)).toBe('reply-a');
    page.feed(hidden);
    expect(seenReplyToRemember(page.state)).toBeUndefined();
    expect(seenReplyToRemember(new Page().state)).toBeUndefined();
  });
});

describe('the Dock\'s "Keep going when I leave" switch', () => {
  it("shows the server's choice, the one asked for at once, and falls back when refused", () => {
    const page = openWithQueue();
    expect(dockView(page.state).drainMode).toBe('viewer');
    page.feed({ type: 'drainMode.requested', mode: 'background' });
    expect(dockView(page.state).drainMode).toBe('background');
    page.feed({
      type: 'drainMode.refused',
      error: { message: 'The server is unavailable.', status: 503, code: 'unavailable', retryable: true },
    });
    expect(dockView(page.state).drainMode).toBe('viewer');
    expect(page.state.notice?.message).toBe('The server is unavailable.');

    page.feed({ type: 'drainMode.requested', mode: 'background' });
    const thread = {
      ...(page.state.thread as NonNullable<typeof page.state.thread>),
      drainMode: 'background' as const,
    };
    page.feed({ type: 'drainMode.answered', thread });
    expect(page.state.drainModeWanted).toBeNull();
    expect(dockView(page.state).drainMode).toBe('background');
  });

  it('follows another tab: a thread.changed read brings the new choice', () => {
    const page = openWithQueue();
    page.feed({ type: 'server', event: { type: 'thread.changed', threadId: THREAD } });
    const answer = detail([...exchange('earlier')], page.state.queue);
    page.readDetail({ ...answer, thread: { ...answer.thread, drainMode: 'background' } });
    expect(dockView(page.state).drainMode).toBe('background');
  });
});
