import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';

/** Reads of a whole thread detail (`GET /api/threads/:id`) a page makes from now on. */
function detailReads(page: Page): string[] {
  const reads: string[] = [];
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (request.method() === 'GET' && /^\/api\/threads\/[^/]+$/.test(pathname)) reads.push(pathname);
  });
  return reads;
}

test.describe('settling a turn', () => {
  test('every tab applies the settled turn from its event, without reading the whole thread again', async ({
    chat,
    context,
  }) => {
    const url = await chat.startThread('[[words:3]] first');
    await chat.waitForIdle();
    const other = await context.newPage();
    const otherChat = new ChatPage(other);
    await other.goto(url);
    await otherChat.waitUntilReady();
    await expect(otherChat.assistantMessages).toHaveCount(1);

    const reads = [...[chat.page, other].map(detailReads)];
    await chat.send('[[words:20]] [[delay:20]] second');
    for (const tab of [chat, otherChat]) {
      await expect(tab.assistantMessages).toHaveCount(2);
      await tab.waitForIdle();
      // What only the server knows arrived with the event: the reply's model, and the user
      // message under its stored id (a shown-but-unsaved one says "Saving your message…").
      await expect(tab.lastReply().getByTestId('message-model')).toHaveText(
        '· Demo model (scripted replies)',
      );
      await expect(tab.userMessages.last().getByTestId('message-actions')).not.toHaveAttribute(
        'data-message-id',
        /^turn-/,
      );
    }
    expect(reads.flat()).toEqual([]);

    // The applied transcript is the one the server has: a reload shows the same.
    const texts = chat.transcript.getByTestId('message-text');
    const shown = await texts.allTextContents();
    expect(shown).toHaveLength(4);
    await chat.reload();
    await expect(chat.assistantMessages).toHaveCount(2);
    expect(await texts.allTextContents()).toEqual(shown);
  });
});
