import type { Locator } from '@playwright/test';
import { expect, test } from './fixtures';
import { AccountPages } from './pages/AccountPages';
import { threadIdOf } from './pages/Sidebar';

/** Computed font size of an element, in pixels. */
async function fontSize(locator: Locator): Promise<number> {
  return await locator.evaluate((element) => Number.parseFloat(getComputedStyle(element).fontSize));
}

test.describe('the rough edges a first-time user hits', () => {
  test('a Markdown heading in a reply is larger than its body text', async ({ chat }) => {
    await chat.startThread('[[markdown]] [[delay:0]] headings');
    await chat.waitForIdle();
    const reply = chat.lastReply();
    const heading = reply.getByRole('heading', { name: 'What a reply can hold' });
    await expect(heading).toBeVisible();
    const body = reply.locator('.message-markdown p').first();
    expect(await fontSize(heading)).toBeGreaterThanOrEqual((await fontSize(body)) * 1.15);
  });

  test('renaming a chat moves it to the top of the list at once, as the server orders it', async ({
    chat,
    sidebar,
  }) => {
    const older = threadIdOf(await chat.startThread('older chat [[words:3]]'));
    await chat.waitForIdle();
    const newer = threadIdOf(await chat.startThread('newer chat [[words:3]]'));
    await chat.waitForIdle();
    const order = () =>
      sidebar.items.evaluateAll((items) => items.map((item) => item.getAttribute('data-thread-id')));
    await expect.poll(order).toEqual([newer, older]);

    await sidebar.rename(older, 'renamed older chat');
    await expect(sidebar.link(older)).toHaveText('renamed older chat');
    await expect.poll(order).toEqual([older, newer]);
    // The server agrees: a reload shows the same order.
    await chat.reload();
    await expect.poll(order).toEqual([older, newer]);
  });

  test("the guest menu's header is shown whole", async ({ chat, page }) => {
    await chat.openStartPage();
    const account = new AccountPages(page);
    await expect(account.menuButton).toHaveAccessibleName('Account menu: Guest');
    await account.menuButton.click();
    const header = page.getByRole('menu').getByText('Guest: chats stay in this browser');
    await expect(header).toBeVisible();
    const cut = await header.evaluate((element) => element.scrollWidth > element.clientWidth + 1);
    expect(cut, 'the header is truncated').toBe(false);
  });

  test('a reply that waits for an approval offers no Copy or Regenerate until it is decided', async ({
    chat,
  }) => {
    await chat.startThread('note this [[tool:save_note]] [[words:6]]');
    const reply = chat.lastReply();
    await expect(reply.getByRole('button', { name: 'Approve', exact: true })).toBeVisible();
    await expect(chat.stopButton).toBeVisible();
    await expect(reply.getByRole('button', { name: 'Copy reply' })).toHaveCount(0);
    await expect(reply.getByRole('button', { name: 'Regenerate reply' })).toHaveCount(0);

    await reply.getByRole('button', { name: 'Approve', exact: true }).click();
    await chat.waitForIdle();
    await expect(reply.getByRole('button', { name: 'Copy reply' })).toHaveCount(1);
    await expect(reply.getByRole('button', { name: 'Regenerate reply' })).toHaveCount(1);
  });
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test("the messages' and the Dock's buttons are at least 44 px", async ({ chat, dock, page }) => {
    await chat.startThread('[[words:3]] first');
    await chat.waitForIdle();
    await chat.editMessage(chat.userMessages.first(), '[[words:1000]] [[delay:30]] second');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('queued one');
    await chat.send('queued two');
    await dock.expectTexts(['queued one', 'queued two']);

    const small = async (scope: Locator): Promise<string[]> =>
      await scope.getByRole('button').evaluateAll((buttons) =>
        buttons.flatMap((button) => {
          const box = button.getBoundingClientRect();
          if (box.width === 0 && box.height === 0) return [];
          return box.width < 44 || box.height < 44
            ? [
                `${button.getAttribute('aria-label') ?? button.textContent?.trim()}: ${box.width}x${box.height}`,
              ]
            : [];
        }),
      );
    expect(await small(page.getByTestId('queue-dock'))).toEqual([]);
    expect(await small(chat.userMessages.first().getByTestId('message-actions'))).toEqual([]);
    await chat.stopButton.click();
    await chat.waitForIdle();
    await expect(chat.lastReply().getByTestId('reply-actions')).toBeVisible();
    expect(await small(chat.lastReply().getByTestId('reply-actions'))).toEqual([]);
    expect(await small(chat.lastReply().getByTestId('feedback'))).toEqual([]);
  });
});
