import type { SteerBoundaryData } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { reduceThreadPage } from '../../app/threadPage/reducer';
import { windowOf } from '../../app/threadPage/transcript';
import { composerView, dockView } from '../../app/threadPage/views';
import type { ChatUIMessage } from '../../app/utils/chatMessages';
import {
  detail,
  exchange,
  Page,
  queueChanged,
  queueOf,
  server,
  settled,
  streamed,
  THREAD,
  turn,
} from '../support/threadFacts';

describe('a detail and the facts that came while it was on its way', () => {
  it('keeps the queue of an event newer than a detail answer, and still shows the detail’s transcript', () => {
    const page = Page.opened(detail(exchange('earlier'), queueOf(turn('a', 'running'))));
    page.feed({ type: 'server', event: { type: 'thread.changed', threadId: THREAD } });
    const request = page.sendDetailRead();
    // The queue changed after the read went out: the read's copy of the queue is older.
    page.feed(queueChanged(queueOf(turn('a', 'running'), [turn('b', 'queued')])));
    page.feed({
      type: 'detail.answered',
      ...request,
      detail: detail([...exchange('earlier'), ...exchange('renamed')], queueOf(turn('a', 'running'))),
    });
    expect(page.state.queue.items.map((item) => item.id)).toEqual(['b']);
    expect(page.state.transcript.messages.map((message) => message.id)).toContain('reply-renamed');
  });

  it('drops an answer overtaken by a newer read', () => {
    const page = Page.opened(detail(exchange('earlier')));
    page.feed({ type: 'server', event: { type: 'thread.changed', threadId: THREAD } });
    const older = page.sendDetailRead();
    page.feed({ type: 'server', event: { type: 'thread.changed', threadId: THREAD } });
    // Only one read goes out at a time: the next waits for this one.
    expect(page.effectTypes()).toEqual([]);
    page.feed({ type: 'detail.requested' });
    const newer = { request: page.state.detail.latest, at: { ...page.state.facts } };
    page.feed({ type: 'detail.answered', ...newer, detail: detail(exchange('newest')) });
    page.feed({ type: 'detail.answered', ...older, detail: detail(exchange('old')) });
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual([
      'user-newest',
      'reply-newest',
    ]);
    expect(page.state.detail.inFlight).toBe(0);
  });

  it('does not replace the transcript with a detail requested before a settle was applied', () => {
    const page = Page.opened(detail([]));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
      { type: 'server', event: { type: 'thread.changed', threadId: THREAD } },
    );
    const request = page.sendDetailRead();
    page.feed(
      { type: 'stream.ended', turnId: 'a', outcome: 'ended' },
      settled(turn('a', 'completed'), queueOf(null), exchange('a', 'final words')),
      { type: 'detail.answered', ...request, detail: detail([]) },
    );
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual(['user-a', 'reply-a']);
  });

  it('a reconnect in the middle of a steer keeps the live reply and its roll, and follows the Dock', () => {
    const steer = turn('s', 'steer_pending', 'also book a hotel', { steer: true });
    const page = Page.opened(detail(exchange('earlier'), queueOf(turn('a', 'running'), [steer])));
    page.feed({
      type: 'stream.opened',
      turnId: 'a',
      kind: 'attach',
      user: { text: 'text of a', attachments: [] },
    });
    page.feed(streamed('a', 'flights first'));
    // The events stream drops and comes back: events may have been missed, so the thread is read.
    page.feed({ type: 'events.disconnected' });
    expect(dockView(page.state).items.map((item) => item.when)).toEqual([
      'Joins the current reply at its next step',
    ]);
    page.feed({ type: 'events.connected' });
    const request = page.sendDetailRead();
    // Meanwhile the steer is delivered at a step boundary: the stream carries it.
    const boundary: SteerBoundaryData = {
      steers: [{ turnId: 's', messageId: 'steer-message', text: 'also book a hotel' }],
      continuationMessageId: 'continuation',
    };
    page.feed(
      streamed('a', 'flights first', [
        { type: 'data-steer-boundary', data: boundary } as ChatUIMessage['parts'][number],
      ]),
    );
    // The detail (read while the reply runs) brings the queue; the live reply stays as it is.
    page.feed({
      type: 'detail.answered',
      ...request,
      detail: detail(exchange('earlier'), queueOf(turn('a', 'running'))),
    });
    expect(page.state.queue.items).toEqual([]);
    expect(page.state.transcript.live?.reply?.parts).toHaveLength(2);
    const shown = windowOf(page.state.transcript, 100).shown;
    expect(shown.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(shown.at(-2)?.parts[0]).toMatchObject({ type: 'text', text: 'also book a hotel' });
    // Still following the same reply: nothing to attach or claim.
    expect(page.effectTypes()).toEqual([]);
  });

  it('a first load that fails while the API is away retries by itself, and says it is reconnecting', () => {
    const page = new Page().feed({ type: 'events.connected' });
    const request = page.sendDetailRead();
    const unavailable = {
      message: 'The API cannot be reached.',
      status: 503,
      code: 'unavailable',
      retryable: true,
    };
    page.feed({ type: 'detail.failed', ...request, error: unavailable, ofThread: true });
    expect(composerView(page.state)).toMatchObject({ disabled: true, disabledReason: 'Reconnecting…' });
    expect(page.effectTypes()).toEqual(['retryLoad']);
    page.feed({ type: 'load.retryScheduled' });
    expect(page.effectTypes()).toEqual([]);
    page.feed({ type: 'load.retryDue' });
    page.readDetail(detail(exchange('back')));
    expect(page.state.load).toEqual({ phase: 'ready', error: null, retryScheduled: false });
    expect(composerView(page.state).disabled).toBe(false);
  });

  it('a read answered 404 means the chat was deleted; a refused version switch does not', () => {
    const page = Page.opened(detail(exchange('earlier')));
    page.feed({ type: 'detail.requested' });
    const notFound = { message: 'No such message.', status: 404, code: 'not_found', retryable: false };
    page.feed({ type: 'detail.failed', request: page.state.detail.latest, error: notFound, ofThread: false });
    expect(page.state.deleted).toBe(false);
    page.feed({ type: 'server', event: { type: 'thread.changed', threadId: THREAD } });
    const request = page.sendDetailRead();
    page.feed({ type: 'detail.failed', ...request, error: notFound, ofThread: true });
    expect(page.state.deleted).toBe(true);
    expect(page.effectTypes()).toEqual([]);
  });

  it('ignores events of another thread', () => {
    const page = Page.opened(detail([]));
    const before = page.state;
    const after = reduceThreadPage(before, server({ type: 'thread.deleted', threadId: 'another' }));
    expect(after).toBe(before);
  });
});

describe('a long chat', () => {
  it('streams a delta into one message: the transcript’s other messages are not copied or scanned', () => {
    const messages = Array.from({ length: 2000 }, (_, index) => exchange(`t${index}`)).flat();
    const page = Page.opened(detail(messages));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'stream.opened', turnId: 'a', kind: 'send', user: { text: 'text of a', attachments: [] } },
    );
    const held = page.state.transcript.messages;
    page.feed(streamed('a', 'one'), streamed('a', 'one two'), streamed('a', 'one two three'));
    expect(page.state.transcript.messages).toBe(held);
    const { shown, hiddenCount } = windowOf(page.state.transcript, 100);
    expect(shown).toHaveLength(100);
    expect(hiddenCount).toBe(4001 - 99);
    expect(shown.at(-1)?.parts[0]).toMatchObject({ text: 'one two three' });
  });
});
