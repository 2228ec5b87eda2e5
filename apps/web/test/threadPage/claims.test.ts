import { errorMessage } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { effectsOf } from '../../app/threadPage/effects';
import { noticeMessage } from '../../app/threadPage/views';
import {
  detail,
  exchange,
  Page,
  queueChanged,
  queueOf,
  settled,
  started,
  turn,
} from '../support/threadFacts';

const notEligible = {
  message: 'A turn is already running.',
  status: 409,
  code: 'not_eligible',
  retryable: false,
};

describe('claiming the queue head (Q10)', () => {
  it('claims a waiting head as soon as the page is open and attached', () => {
    const page = Page.opened(detail(exchange('earlier'), queueOf(null, [turn('b', 'queued')])));
    expect(page.effects()).toEqual([
      { type: 'claim', head: turn('b', 'queued'), at: page.state.facts.queue },
    ]);
  });

  it('does not claim before the first detail, while detached, paused, or while the head is edited or failed', () => {
    expect(new Page().feed({ type: 'events.connected' }).effectTypes()).toEqual(['readDetail']);

    const waiting = queueOf(null, [turn('b', 'queued')]);
    const detached = new Page().readDetail(detail([], waiting));
    expect(detached.effectTypes()).toEqual([]);

    expect(Page.opened(detail([], queueOf(null, [turn('b', 'queued')], true))).effectTypes()).toEqual([]);

    const editing = Page.opened(detail([], waiting)).feed({ type: 'queueEdit.started', turnId: 'b' });
    expect(editing.effectTypes()).toEqual([]);
    // The edit ends: the head may run now.
    expect(editing.feed({ type: 'queueEdit.ended' }).effectTypes()).toEqual(['claim']);

    const failed = Page.opened(detail([], queueOf(null, [turn('b', 'failed'), turn('c', 'queued')])));
    expect(failed.effectTypes()).toEqual([]);
  });

  it('two tabs race a claim: the loser says nothing, claims no more, and attaches to the winner’s turn', () => {
    const page = Page.opened(detail(exchange('earlier'), queueOf(null, [turn('b', 'queued')])));
    const [claim] = page.effects();
    if (claim?.type !== 'claim') throw new Error('expected a claim');
    page.feed({ type: 'start.requested', kind: 'claim', claimAt: claim.at });
    // While the claim is out, nothing else is decided.
    expect(page.effectTypes()).toEqual([]);

    page.feed({ type: 'start.refused', kind: 'claim', error: notEligible, claimAt: claim.at });
    expect(page.state.notice).toBeNull();
    expect(noticeMessage(page.state)).toBeNull();
    // The view it was refused at does not claim again.
    expect(page.effectTypes()).toEqual([]);

    // The other tab's claim started the head: this tab follows it.
    page.feed(started(turn('b', 'running'), queueOf(turn('b', 'running'))));
    expect(page.effects()).toEqual([{ type: 'attach', turn: turn('b', 'running') }]);
    page.feed({
      type: 'stream.opened',
      turnId: 'b',
      kind: 'attach',
      user: { text: 'text of b', attachments: [] },
    });
    expect(page.state.transcript.messages.at(-1)?.id).toBe('turn-b-user');
    expect(page.effectTypes()).toEqual([]);
  });

  it('the winner of the race streams the head, which leaves the Dock at once', () => {
    const page = Page.opened(detail([], queueOf(null, [turn('b', 'queued'), turn('c', 'queued')])));
    page.feed(
      { type: 'start.requested', kind: 'claim', claimAt: page.state.facts.queue },
      { type: 'stream.opened', turnId: 'b', kind: 'claim', user: { text: 'text of b', attachments: [] } },
    );
    expect(page.state.queue.items.map((item) => item.id)).toEqual(['c']);
    expect(page.state.starts).toBe(0);
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual(['turn-b-user']);
    // Its own turn's started event does not make it attach to what it streams.
    page.feed(started(turn('b', 'running'), queueOf(turn('b', 'running'), [turn('c', 'queued')])));
    expect(page.effectTypes()).toEqual([]);
  });

  it('does not attach again to a turn it streamed to the end while the server still calls it active', () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
      { type: 'stream.ended', turnId: 'a', outcome: 'ended' },
      { type: 'settleWait.started', turnId: 'a' },
      queueChanged(queueOf(turn('a', 'running'))),
      settled(turn('a', 'completed'), queueOf(turn('a', 'running')), exchange('a')),
    );
    // A queue that calls a settled turn active is older than the settle: the thread is read again.
    expect(page.effectTypes()).toEqual(['readDetail']);
  });

  it("claims the head when a send's answer, read before the reply settled, arrives after its settle event", () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
      { type: 'stream.ended', turnId: 'a', outcome: 'ended' },
      settled(turn('a', 'completed'), queueOf(null, [turn('b', 'queued')]), exchange('a')),
      // The answer to the send of b: its queue was read while a still ran.
      { type: 'queue.answered', turnQueue: queueOf(turn('a', 'running'), [turn('b', 'queued')]) },
    );
    expect(page.state.queue.activeTurn).toBeNull();
    page.readDetail(detail(exchange('a'), queueOf(null, [turn('b', 'queued')])));
    expect(page.effectTypes()).toEqual(['claim']);
  });

  it('a failed head blocks the queue: no claim, the Dock says why, the banner does not repeat it (Q11)', () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
      { type: 'stream.ended', turnId: 'a', outcome: 'ended', error: 'The model failed.' },
    );
    const failedQueue = queueOf(null, [
      turn('a', 'failed', 'text of a', { error: 'The model failed.' }),
      turn('c', 'queued'),
    ]);
    page.feed(settled(turn('a', 'failed'), failedQueue));
    page.readDetail(detail(exchange('a'), failedQueue));
    expect(page.effectTypes()).toEqual([]);
    expect(noticeMessage(page.state)).toBeNull();
  });

  it('a stream error of a turn that is not in the Dock shows on the banner', () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
      { type: 'stream.ended', turnId: 'a', outcome: 'ended', error: 'The connection was lost.' },
    );
    expect(noticeMessage(page.state)).toBe('The connection was lost.');
    page.feed({ type: 'notice.dismissed' });
    expect(noticeMessage(page.state)).toBeNull();
  });

  it('a send the server queued shows its item from the answer, before the event', () => {
    const page = Page.opened(detail([], queueOf(turn('a', 'running'))));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'start.queued', kind: 'send', turnQueue: queueOf(turn('a', 'running'), [turn('b', 'queued')]) },
    );
    expect(page.state.queue.items.map((item) => item.id)).toEqual(['b']);
    expect(page.state.transcript.messages).toEqual([]);
  });

  it('a refused send says so on the banner, with the contract’s words for a full queue', () => {
    const page = Page.opened(detail([], queueOf(turn('a', 'running'))));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      {
        type: 'start.refused',
        kind: 'send',
        error: { message: 'full', status: 409, code: 'queue_full', retryable: false },
        retryOffered: true,
      },
    );
    expect(page.state.notice?.message).toBe(
      `Not sent; your message is back in the box. ${errorMessage('queue_full')}`,
    );
    // Sending it again cannot help: no Retry.
    expect(page.state.notice?.retryable).toBe(false);
  });

  it('asks for the thread list after a send that streams (the title may be new)', () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
    );
    expect(effectsOf(page.state).map((effect) => effect.type)).toContain('refreshThreadList');
    page.feed({ type: 'threadList.refreshed' });
    expect(effectsOf(page.state).map((effect) => effect.type)).not.toContain('refreshThreadList');
  });
});
