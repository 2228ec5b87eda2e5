import { describe, expect, it } from 'vitest';
import {
  detail,
  exchange,
  Page,
  queueChanged,
  queueOf,
  settled,
  streamed,
  turn,
} from '../support/threadFacts';

/** A page that sent `a` (streaming now) while `b` waits in the queue. */
function streamingWithOneQueued(): Page {
  const page = Page.opened(detail(exchange('earlier')));
  page.feed(
    { type: 'start.requested', kind: 'send' },
    {
      type: 'stream.opened',
      turnId: 'a',
      kind: 'send',
      user: { text: 'text of a', attachments: [] },
    },
    streamed('a', 'half'),
    queueChanged(queueOf(turn('a', 'running'), [turn('b', 'queued')])),
  );
  return page;
}

describe('a settle event and the end of the stream it settles', () => {
  it('applies a settle event that comes before the stream ends once the stream has ended, then claims the head', () => {
    const page = streamingWithOneQueued();
    page.feed(
      settled(
        turn('a', 'completed'),
        queueOf(null, [turn('b', 'queued')]),
        exchange('a', 'the whole answer'),
      ),
    );
    // The stream is still shown: nothing replaces it, nothing is claimed, nothing is read.
    expect(page.state.transcript.live?.turnId).toBe('a');
    expect(page.effectTypes()).toEqual([]);

    page.feed(streamed('a', 'the whole answer'), { type: 'stream.ended', turnId: 'a', outcome: 'ended' });
    const messages = page.state.transcript.messages;
    expect(messages.map((message) => message.id)).toEqual([
      'user-earlier',
      'reply-earlier',
      'user-a',
      'reply-a',
    ]);
    // The server's copy, with what only it knows (the model), replaced the optimistic one.
    expect(messages.at(-1)?.metadata?.model).toBe('local');
    expect(page.effects()).toEqual([
      { type: 'claim', head: turn('b', 'queued'), at: page.state.facts.queue },
    ]);
  });

  it('waits for a settle event that comes after the stream ended, applies it, then claims the head', () => {
    const page = streamingWithOneQueued();
    page.feed({ type: 'stream.ended', turnId: 'a', outcome: 'ended' });
    // No claim until the transcript is in line with the server: the settle event is on its way.
    expect(page.effectTypes()).toEqual(['waitForSettle']);
    page.feed({ type: 'settleWait.started', turnId: 'a' });
    expect(page.effectTypes()).toEqual([]);

    page.feed(settled(turn('a', 'completed'), queueOf(null, [turn('b', 'queued')]), exchange('a')));
    expect(page.state.settleWait).toBeNull();
    expect(page.state.transcript.messages.at(-1)?.id).toBe('reply-a');
    expect(page.effectTypes()).toEqual(['claim']);
    // A late timer changes nothing any more.
    page.feed({ type: 'settleWait.expired', turnId: 'a' });
    expect(page.effectTypes()).toEqual(['claim']);
  });

  it('reads the detail when the settle event does not come in time', () => {
    const page = streamingWithOneQueued();
    page.feed(
      { type: 'stream.ended', turnId: 'a', outcome: 'ended' },
      { type: 'settleWait.started', turnId: 'a' },
      { type: 'settleWait.expired', turnId: 'a' },
    );
    expect(page.effectTypes()).toEqual(['readDetail']);
    page.readDetail(detail([...exchange('earlier'), ...exchange('a')], queueOf(null, [turn('b', 'queued')])));
    expect(page.state.transcript.messages).toHaveLength(4);
    expect(page.effectTypes()).toEqual(['claim']);
  });

  it('reads the detail when the stream ends while the events stream is down (no settle event can come)', () => {
    const page = streamingWithOneQueued();
    page.feed({ type: 'events.disconnected' }, { type: 'stream.ended', turnId: 'a', outcome: 'ended' });
    expect(page.effectTypes()).toEqual(['readDetail']);
  });

  it('reads the detail when a settle event cannot be applied (another version is shown)', () => {
    const page = streamingWithOneQueued();
    page.feed({ type: 'stream.ended', turnId: 'a', outcome: 'ended' });
    page.feed(
      settled(
        turn('a', 'completed', 'text of a', { branchId: 'another-branch' }),
        queueOf(null),
        exchange('a'),
      ),
    );
    expect(page.effectTypes()).toEqual(['readDetail']);
  });

  it('puts a settled turn of another tab, which this tab never showed, in place by reading the detail', () => {
    const page = Page.opened(detail(exchange('earlier')));
    page.feed(settled(turn('elsewhere', 'completed'), queueOf(null), exchange('elsewhere')));
    expect(page.effectTypes()).toEqual(['readDetail']);
  });

  it('shows a turn that settled while another stream was shown, once that stream ends (a read then could not show it)', () => {
    // Another tab runs `a`, then `b`; this tab follows `a`, and its stream is still opening when
    // both settle (a busy machine: the answer to the attach comes seconds late).
    const page = Page.opened(
      detail(exchange('earlier'), queueOf(turn('a', 'running'), [turn('b', 'queued')])),
    );
    expect(page.effectTypes()).toEqual(['attach']);
    page.feed({
      type: 'stream.opened',
      turnId: 'a',
      kind: 'attach',
      user: { text: 'text of a', attachments: [] },
    });
    page.feed(settled(turn('a', 'completed'), queueOf(null, [turn('b', 'queued')]), exchange('a')));
    page.feed(queueChanged(queueOf(turn('b', 'running'))));
    // `b` cannot be put in place behind a stream still shown: the thread is read instead...
    page.feed(settled(turn('b', 'completed'), queueOf(null), exchange('b')));
    // ...and its answer comes while `a` still shows, so its transcript cannot be shown either.
    page.readDetail(detail([...exchange('earlier'), ...exchange('a'), ...exchange('b')], queueOf(null)));
    expect(page.state.transcript.live?.turnId).toBe('a');

    // The attach is answered: `a` ended before it (204).
    page.feed({ type: 'stream.ended', turnId: 'a', outcome: 'gone' });
    page.readDetail(detail([...exchange('earlier'), ...exchange('a'), ...exchange('b')], queueOf(null)));
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual([
      'user-earlier',
      'reply-earlier',
      'user-a',
      'reply-a',
      'user-b',
      'reply-b',
    ]);
    expect(page.effectTypes()).toEqual([]);
  });

  it('marks a reply interrupted when its turn settles interrupted', () => {
    const page = streamingWithOneQueued();
    page.feed({ type: 'stream.ended', turnId: 'a', outcome: 'ended' });
    // The event has no messages (nothing to replace with), so only the mark shows until the read.
    page.feed(settled(turn('a', 'interrupted'), queueOf(null, [turn('b', 'queued')])));
    expect(page.state.transcript.messages.at(-1)?.metadata?.interrupted).toBe(true);
    expect(page.effectTypes()).toEqual(['readDetail']);
  });
});
