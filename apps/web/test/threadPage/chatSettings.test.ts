import { describe, expect, it } from 'vitest';
import { detail, exchange, Page, queueOf } from '../support/threadFacts';

/** M2, M4: the composer's model picker and the chat's instructions, as the page state takes them. */
describe("the chat's model and instructions", () => {
  it("shows the server's answer and reads the detail again, so the meter takes the model's window", () => {
    const page = Page.opened(detail([...exchange('earlier')], queueOf(null)));
    expect(page.effectTypes()).not.toContain('readDetail');
    const thread = {
      ...(page.state.thread as NonNullable<typeof page.state.thread>),
      model: 'local-b',
      instructions: 'Be brief.',
    };
    page.feed({ type: 'chatSettings.answered', thread });
    expect(page.state.thread?.model).toBe('local-b');
    expect(page.state.thread?.instructions).toBe('Be brief.');
    expect(page.effectTypes()).toContain('readDetail');
  });

  it('says why a change was refused and keeps the chat as it was', () => {
    const page = Page.opened(detail([...exchange('earlier')], queueOf(null)));
    const before = page.state.thread;
    page.feed({
      type: 'chatSettings.refused',
      error: {
        message: 'No model "gone" is offered here.',
        status: 400,
        code: 'bad_request',
        retryable: false,
      },
    });
    expect(page.state.thread).toBe(before);
    expect(page.state.notice?.message).toBe('No model "gone" is offered here.');
  });
});
