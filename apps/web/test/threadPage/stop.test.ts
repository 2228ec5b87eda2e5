import { refusalMessages } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { whenItemsRun } from '../../app/threadPage/queue';
import type { Refusal } from '../../app/threadPage/state';
import { composerView, dockView } from '../../app/threadPage/views';
import { detail, exchange, Page, queueOf, settled, started, streamed, turn } from '../support/threadFacts';

/** A page streaming its own reply to `a` with `b` waiting in the Dock. */
function streamingWithB(): Page {
  const page = Page.opened(detail(exchange('earlier'), queueOf(turn('a', 'running'), [turn('b', 'queued')])));
  // The page attaches to the running reply (after a reload, say).
  expect(page.effects()).toEqual([{ type: 'attach', turn: turn('a', 'running') }]);
  return page.feed(
    { type: 'stream.opened', turnId: 'a', kind: 'attach', user: { text: 'text of a', attachments: [] } },
    streamed('a', 'half an answer'),
  );
}

/** Stop & send on `streamingWithB`: the reply stops, then the claim of the head is refused with `error`. */
function stopAndSendRefused(error: Refusal): Page {
  return streamingWithB().feed(
    { type: 'stop.started' },
    { type: 'start.requested', kind: 'sendNow' },
    { type: 'stream.ended', turnId: 'a', outcome: 'stopped' },
    { type: 'stop.ended', refetch: false },
    { type: 'start.refused', kind: 'sendNow', error },
  );
}

describe('Stop', () => {
  it('with items waiting, the interrupt pauses the queue: nothing is claimed and the Dock says paused (S3)', () => {
    const page = streamingWithB();
    page.feed({ type: 'stop.started' });
    page.feed({ type: 'stop.started' }, { type: 'stream.ended', turnId: 'a', outcome: 'stopped' });
    page.feed({ type: 'stop.ended', refetch: false });
    // The interrupt settles the turn; its event may come before the interrupt's answer.
    page.feed(settled(turn('a', 'interrupted'), queueOf(null, [turn('b', 'queued')], true)));
    expect(page.effectTypes()).not.toContain('claim');
    page.feed({
      type: 'stop.ended',
      interrupted: { turn: turn('a', 'interrupted'), queuePaused: true },
      refetch: true,
    });
    expect(page.state.transcript.messages.at(-1)?.metadata?.interrupted).toBe(true);
    expect(page.state.queue.paused).toBe(true);
    expect(page.effectTypes()).toEqual(['readDetail']);
    page.readDetail(
      detail([...exchange('earlier'), ...exchange('a')], queueOf(null, [turn('b', 'queued')], true)),
    );
    expect(page.effectTypes()).toEqual([]);
    expect(dockView(page.state)).toMatchObject({ paused: true, busy: false });
    expect(whenItemsRun(page.state)).toEqual(['Paused: resume the queue to run it.']);
    expect(composerView(page.state)).toMatchObject({ paused: true, queues: true, busy: false });
  });

  it('says paused from the interrupt’s answer even before any event brings the paused queue', () => {
    const page = streamingWithB();
    page.feed(
      { type: 'stop.started' },
      { type: 'stop.started' },
      { type: 'stream.ended', turnId: 'a', outcome: 'stopped' },
      { type: 'stop.ended', refetch: false },
      {
        type: 'stop.ended',
        interrupted: { turn: turn('a', 'interrupted'), queuePaused: true },
        refetch: true,
      },
    );
    expect(page.state.queue.paused).toBe(true);
    expect(page.effects().some((effect) => effect.type === 'claim')).toBe(false);
  });

  it('does not attach again to the turn it stopped while the server still calls it active', () => {
    const page = streamingWithB();
    page.feed(
      { type: 'stop.started' },
      { type: 'stop.started' },
      { type: 'stream.ended', turnId: 'a', outcome: 'stopped' },
      { type: 'stop.ended', refetch: false },
      { type: 'stop.ended', interrupted: { turn: turn('a', 'interrupted') }, refetch: true },
    );
    page.readDetail(detail(exchange('earlier'), queueOf(turn('a', 'running'), [turn('b', 'queued')])));
    expect(page.effectTypes()).toEqual([]);
  });

  it('Stop & send streams the head here as soon as the server answers; other tabs’ events attach nothing', () => {
    const page = streamingWithB();
    // sendNow: the local stream stops first, then the request goes out.
    page.feed({ type: 'stop.started' }, { type: 'start.requested', kind: 'sendNow' });
    page.feed(
      { type: 'stream.ended', turnId: 'a', outcome: 'stopped' },
      { type: 'stop.ended', refetch: false },
    );
    // Between the local stop and the answer: the interrupted turn settles, nothing is claimed.
    page.feed(settled(turn('a', 'interrupted'), queueOf(null, [turn('b', 'queued')])));
    expect(page.effectTypes().filter((type) => type === 'claim' || type === 'attach')).toEqual([]);
    page.feed({
      type: 'stream.opened',
      turnId: 'b',
      kind: 'sendNow',
      user: { text: 'text of b', attachments: [] },
    });
    expect(page.state.queue.items).toEqual([]);
    expect(page.state.transcript.live?.turnId).toBe('b');
    page.feed(
      started(turn('b', 'running'), queueOf(turn('b', 'running'))),
      streamed('b', '(after interruption)'),
    );
    expect(page.effectTypes().filter((type) => type === 'claim' || type === 'attach')).toEqual([]);
    // The stopped reply keeps its interrupted mark; the head's reply streams after it.
    expect(
      page.state.transcript.messages.map((message) => [message.id, message.metadata?.interrupted]),
    ).toEqual([
      ['user-earlier', undefined],
      ['reply-earlier', undefined],
      ['turn-a-user', undefined],
      ['reply-a', true],
      ['turn-b-user', undefined],
    ]);
  });

  it('Stop & send that lost the head to another tab says nothing and reads where the queue is', () => {
    const page = stopAndSendRefused({
      message: 'A turn is already running.',
      status: 409,
      code: 'not_eligible',
      retryable: false,
    });
    expect(page.state.notice).toBeNull();
    expect(page.effectTypes()).toEqual(['readDetail']);
    page.readDetail(detail(exchange('earlier'), queueOf(turn('b', 'running'))));
    expect(page.effects()).toEqual([{ type: 'attach', turn: turn('b', 'running') }]);
  });

  it('Stop & send answered "reply stopped, message waiting" (the database went away) shows exactly that: the reply interrupted, the head waiting in a paused Dock, Send now (F4)', () => {
    const page = stopAndSendRefused({
      message: refusalMessages.unavailable.stoppedNotSent,
      status: 503,
      code: 'unavailable',
      retryable: true,
      leftWaiting: { queuePaused: true, replyStopped: true },
    });
    // The reply stopped: marked interrupted, nothing runs here, nothing attaches to it again.
    expect(page.state.transcript.messages.at(-1)?.metadata?.interrupted).toBe(true);
    expect(page.state.queue.activeTurn).toBeNull();
    // The message waits first, paused; its action is Send now (nothing runs to stop).
    expect(dockView(page.state)).toMatchObject({
      paused: true,
      busy: false,
      items: [{ turn: turn('b', 'queued'), isHead: true }],
    });
    expect(whenItemsRun(page.state)).toEqual(['Paused: resume the queue to run it.']);
    // The banner says so in the server's words, and offers no Retry: Send now is the way on.
    expect(page.state.notice).toMatchObject({
      message: refusalMessages.unavailable.stoppedNotSent,
      retryable: false,
    });
    // Nothing is claimed or attached, and the thread is not read while the server is away.
    expect(page.effectTypes()).toEqual([]);
    // The database back, the thread still calls the stopped turn active a moment: not attached.
    page.feed({ type: 'events.connected' });
    page.readDetail(detail(exchange('earlier'), queueOf(turn('a', 'running'), [turn('b', 'queued')], true)));
    expect(page.effectTypes().filter((type) => type === 'claim' || type === 'attach')).toEqual([]);
  });
});
