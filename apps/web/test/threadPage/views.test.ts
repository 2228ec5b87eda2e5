import { describe, expect, it } from 'vitest';
import { whenItemsRun } from '../../app/threadPage/queue';
import { finishedAnnouncement, firstSentence, versionsView } from '../../app/threadPage/views';
import { detail, exchange, Page, queueOf, streamed, turn } from '../support/threadFacts';

const three = [turn('b', 'queued'), turn('c', 'queued'), turn('d', 'queued')];

describe('when each Dock item runs', () => {
  it('every item says it while a reply runs: the head after it, the others after that many more', () => {
    const page = Page.opened(detail([], queueOf(turn('a', 'running'), three)));
    expect(whenItemsRun(page.state)).toEqual([
      'Runs after the current reply.',
      'Runs after the current reply and 1 more.',
      'Runs after the current reply and 2 more.',
    ]);
  });

  it('a paused queue says paused on every item, also while a reply runs (never "Runs after the current reply")', () => {
    const page = Page.opened(detail([], queueOf(turn('a', 'running'), three, true)));
    expect(whenItemsRun(page.state)).toEqual([
      'Paused: resume the queue to run it.',
      'Paused: after 1 more once resumed.',
      'Paused: after 2 more once resumed.',
    ]);
  });

  it('a reply waiting for an approval holds every item', () => {
    const page = Page.opened(detail([], queueOf(turn('a', 'awaiting_approval'), three.slice(0, 2))));
    expect(whenItemsRun(page.state)).toEqual([
      'Waits for the approval in the reply above.',
      'Waits for the approval, then after 1 more.',
    ]);
  });

  it('a failed head blocks the items behind it', () => {
    const page = Page.opened(detail([], queueOf(null, [turn('f', 'failed'), turn('c', 'queued')])));
    expect(whenItemsRun(page.state)).toEqual([
      'Blocked: this message failed. Retry, edit or remove it to continue.',
      'Waits until the failed message is resolved.',
    ]);
  });

  it('pending steers join the reply and are not counted as running before the items after them', () => {
    const steer = turn('s', 'steer_pending', 'faster', { steer: true });
    const page = Page.opened(detail([], queueOf(turn('a', 'running'), [steer, turn('b', 'queued')])));
    expect(whenItemsRun(page.state)).toEqual([
      'Joins the current reply at its next step',
      'Runs after the current reply.',
    ]);
  });

  it('idle and attached, the head is starting and the next one runs after it; detached, both wait for the page', () => {
    const page = Page.opened(detail([], queueOf(null, three.slice(0, 2))));
    expect(whenItemsRun(page.state)).toEqual(['Starting…', 'Runs after 1 more.']);
    page.feed({ type: 'queueEdit.started', turnId: 'b' });
    expect(whenItemsRun(page.state)[0]).toBe('Waits while you edit it.');
    page.feed({ type: 'events.disconnected' });
    expect(whenItemsRun(page.state)).toEqual([
      'Waiting for this page to reconnect.',
      'Waiting for this page to reconnect.',
    ]);
  });
});

describe('what the version controls allow', () => {
  it('switching waits for the reply; editing also for the queue, in the server’s words', () => {
    const running = Page.opened(detail(exchange('a'), queueOf(turn('b', 'running'))));
    expect(versionsView(running.state).lockedReason).toBe(
      'Wait for the reply to finish, or stop it, before changing versions.',
    );
    const waiting = Page.opened(detail(exchange('a'), queueOf(null, [turn('c', 'queued')], true)));
    expect(versionsView(waiting.state)).toMatchObject({
      lockedReason: null,
      editLockedReason: 'Send or delete the queued messages before editing a message.',
    });
  });
});

describe('what the live region says when a reply finishes', () => {
  it('says the first sentence of the reply, not the whole reply', () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
      streamed('a', 'You said: "hello". Here is\na much longer answer. With more sentences!'),
      { type: 'stream.ended', turnId: 'a', outcome: 'ended' },
    );
    expect(finishedAnnouncement(page.state)).toBe('Reply finished: You said: "hello".');
    const seq = page.state.lastFinished?.seq;
    // A stopped reply is not announced as finished.
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'b', kind: 'send', user: { text: 'text of b', attachments: [] } },
      streamed('b', 'cut'),
      { type: 'stream.ended', turnId: 'b', outcome: 'stopped' },
    );
    expect(page.state.lastFinished?.seq).toBe(seq);
  });

  it('says a failed reply failed', () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
      { type: 'stream.ended', turnId: 'a', outcome: 'ended', error: 'boom' },
    );
    expect(finishedAnnouncement(page.state)).toBe('The reply failed.');
  });

  it('keeps a long first sentence short, and a reply without a full stop whole', () => {
    expect(firstSentence('No full stop here')).toBe('No full stop here');
    expect(firstSentence('Version 2.5 is out. Next')).toBe('Version 2.5 is out.');
    const long = firstSentence(`${'word '.repeat(100)}end.`);
    expect(long.length).toBe(200);
    expect(long.endsWith('…')).toBe(true);
  });
});
