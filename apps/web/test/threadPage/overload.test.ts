import { refusalMessages } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { composerView, noticeView } from '../../app/threadPage/views';
import { detail, exchange, Page, queueOf } from '../support/threadFacts';

const overloaded = {
  message: refusalMessages.overloaded.sends,
  status: 503,
  code: 'overloaded',
  retryable: true,
};

describe('a send the server is too busy to take (503 overloaded, L1)', () => {
  it('says the server is busy while this tab sends it again, as a status that cannot be dismissed, and the composer stays usable', () => {
    const page = Page.opened(detail(exchange('earlier'), queueOf(null)));
    page.feed({ type: 'start.requested', kind: 'send' }, { type: 'start.shed', kind: 'send' });
    expect(noticeView(page.state)).toEqual({
      message: refusalMessages.overloaded.retrying,
      retryable: false,
      busy: true,
    });
    expect(composerView(page.state).disabled).toBe(false);

    // Taken at last: the busy note goes, the reply streams.
    page.feed(
      { type: 'start.shedEnded', kind: 'send' },
      { type: 'stream.opened', turnId: 'n', kind: 'send', user: { text: 'text of n', attachments: [] } },
    );
    expect(noticeView(page.state)).toEqual({ message: null, retryable: false, busy: false });
    expect(page.state.starts).toBe(0);
  });

  it('given up (or stopped), the refusal replaces the busy note and can be retried', () => {
    const page = Page.opened(detail(exchange('earlier'), queueOf(null)));
    page.feed(
      { type: 'start.requested', kind: 'send' },
      { type: 'start.shed', kind: 'send' },
      { type: 'start.shedEnded', kind: 'send' },
      { type: 'start.refused', kind: 'send', error: overloaded, retryOffered: true },
    );
    const notice = noticeView(page.state);
    expect(notice.busy).toBe(false);
    expect(notice.retryable).toBe(true);
    expect(notice.message).toBe(
      `Not sent; your message is back in the box. ${refusalMessages.overloaded.sends}`,
    );
    expect(page.state.shed).toBe(0);
  });

  it('a refusal of another request shows over the busy note, which returns once that is dismissed', () => {
    const page = Page.opened(detail(exchange('earlier'), queueOf(null)));
    page.feed({ type: 'start.requested', kind: 'send' }, { type: 'start.shed', kind: 'send' });
    page.feed({
      type: 'notice.shown',
      error: { message: 'Not found.', status: 404, code: 'not_found', retryable: false },
    });
    expect(noticeView(page.state)).toMatchObject({ message: 'Not found.', busy: false });
    page.feed({ type: 'notice.dismissed' });
    expect(noticeView(page.state)).toMatchObject({
      message: refusalMessages.overloaded.retrying,
      busy: true,
    });
  });
});
