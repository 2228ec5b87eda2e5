import type { ChatMessage } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { whenItemsRun } from '../../app/threadPage/queue';
import { composerView } from '../../app/threadPage/views';
import { approval, detail, exchange, Page, queueOf, server, THREAD, turn } from '../support/threadFacts';

/** The reply of `a` holding the tool call that waits for approval `r`. */
const withToolCall: ChatMessage[] = [
  { id: 'user-a', role: 'user', parts: [{ type: 'text', text: 'note milk' }], metadata: {} },
  {
    id: 'reply-a',
    role: 'assistant',
    parts: [
      { type: 'tool-save_note', toolCallId: 'call-r', state: 'input-available', input: { text: 'milk' } },
    ],
    metadata: { turnId: 'a' },
  },
];

function waitingForApproval(): Page {
  const waiting = queueOf(turn('a', 'awaiting_approval'), [turn('b', 'queued')]);
  return Page.opened(detail(withToolCall, waiting, [approval('r', 'a')]));
}

describe('tool approvals (H3, Q12)', () => {
  it('a reply waiting for an approval has no stream to follow and holds the queue', () => {
    const page = waitingForApproval();
    expect(page.effectTypes()).toEqual([]);
    expect(whenItemsRun(page.state)).toEqual(['Waits for the approval in the reply above.']);
    expect(composerView(page.state).waitingFor).toBe('an approval');
  });

  it('an approval decided in another tab: this tab reads the card, then follows the reply as it continues', () => {
    const page = waitingForApproval();
    // This tab had streamed the reply until it stopped for the approval.
    expect(page.state.finished).not.toContain('a');
    page.feed(
      server({
        type: 'hitl.changed',
        threadId: THREAD,
        hitl: [approval('r', 'a', 'approved')],
        turnQueue: queueOf(turn('a', 'running'), [turn('b', 'queued')]),
      }),
    );
    expect(page.state.hitl[0]?.status).toBe('approved');
    expect(page.effectTypes()).toEqual(['readDetail']);
    page.readDetail(
      detail(withToolCall, queueOf(turn('a', 'running'), [turn('b', 'queued')]), [
        approval('r', 'a', 'approved'),
      ]),
    );
    expect(page.effects()).toEqual([{ type: 'attach', turn: turn('a', 'running') }]);

    // The continuation goes on in the message holding the tool call, without a second user message.
    page.feed({
      type: 'stream.opened',
      turnId: 'a',
      kind: 'attach',
      user: { text: 'note milk', attachments: [] },
    });
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual(['user-a']);
    expect(page.state.transcript.live?.reply?.id).toBe('reply-a');
  });

  it('a stream this tab saw end at the approval is attached to again once the turn runs again', () => {
    const page = Page.opened(detail([], queueOf(turn('a', 'running'))));
    page.feed(
      { type: 'stream.opened', turnId: 'a', kind: 'attach', user: { text: 'note milk', attachments: [] } },
      { type: 'stream.ended', turnId: 'a', outcome: 'ended' },
    );
    expect(page.state.finished).toContain('a');
    page.feed(
      server({
        type: 'hitl.changed',
        threadId: THREAD,
        hitl: [approval('r', 'a')],
        turnQueue: queueOf(turn('a', 'awaiting_approval')),
      }),
    );
    expect(page.state.finished).not.toContain('a');
  });

  it('a decision here continues the reply in place', () => {
    const page = waitingForApproval();
    page.feed(
      { type: 'decision.started', requestId: 'r' },
      { type: 'start.requested', kind: 'decision' },
      { type: 'stream.opened', turnId: 'a', kind: 'decision', user: null },
      { type: 'decision.shown', requestId: 'r', status: 'approved' },
    );
    expect(page.state.transcript.live).toMatchObject({ turnId: 'a', origin: 'continued' });
    expect(page.state.transcript.live?.reply?.id).toBe('reply-a');
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual(['user-a']);
    expect(page.state.hitl[0]?.status).toBe('approved');
    expect(page.state.deciding).toBe('r');
    page.feed({ type: 'stream.ended', turnId: 'a', outcome: 'ended' }, { type: 'decision.ended' });
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual(['user-a', 'reply-a']);
    expect(page.state.deciding).toBeNull();
  });

  it('a refused decision (decided elsewhere already) reads where things are', () => {
    const page = waitingForApproval();
    page.feed(
      { type: 'decision.started', requestId: 'r' },
      { type: 'start.requested', kind: 'decision' },
      {
        type: 'start.refused',
        kind: 'decision',
        error: { message: 'Already decided.', status: 409, code: 'already_decided', retryable: false },
      },
    );
    expect(page.effectTypes()).toEqual(['readDetail']);
    expect(page.state.notice?.message).toBe('Already decided.');
  });

  it('the thread’s other exchanges are not touched by a continuation', () => {
    const page = Page.opened(
      detail([...exchange('earlier'), ...withToolCall], queueOf(turn('a', 'awaiting_approval')), [
        approval('r', 'a'),
      ]),
    );
    page.feed(
      { type: 'start.requested', kind: 'decision' },
      { type: 'stream.opened', turnId: 'a', kind: 'decision', user: null },
    );
    expect(page.state.transcript.messages.map((message) => message.id)).toEqual([
      'user-earlier',
      'reply-earlier',
      'user-a',
    ]);
  });
});
