import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { AccountPages } from './pages/AccountPages';
import type { ChatPage } from './pages/ChatPage';
import { realPng } from './support/images';

/** How many chats the API has for this browser's account (the sidebar may leave some out). */
async function storedChats(page: Page): Promise<number> {
  const answer = (await (await page.request.get('/api/threads')).json()) as { threads: unknown[] };
  return answer.threads.length;
}

/** Waits until every image in the composer is uploaded. */
async function expectUploaded(chat: ChatPage, count: number): Promise<void> {
  const thumbs = chat.composer.getByTestId('attachment-thumb');
  await expect(thumbs).toHaveCount(count);
  for (const thumb of await thumbs.all()) await expect(thumb).toHaveAttribute('data-state', 'ready');
}

/** A file event on the composer's text box: a screenshot pasted, or a file dropped on it. */
async function fileEvent(page: Page, kind: 'paste' | 'drop', name: string, bytes: Buffer): Promise<void> {
  await page
    .getByTestId('composer')
    .locator('textarea')
    .evaluate(
      (textarea, { kind, name, data }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(data)], name, { type: 'image/png' }));
        const event =
          kind === 'paste'
            ? new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true })
            : new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true });
        textarea.dispatchEvent(event);
      },
      { kind, name, data: [...bytes] },
    );
}

test.describe('images on the first message', () => {
  test('an image attached on the start page is sent with the first message', async ({
    chat,
    sidebar,
    page,
  }) => {
    await chat.openStartPage();
    await page.getByTestId('attach-input').setInputFiles({
      name: 'first.png',
      mimeType: 'image/png',
      buffer: realPng(64, 48),
    });
    await expectUploaded(chat, 1);
    // The image made a chat to live in, but it is not a chat in the list until it is sent.
    expect(await storedChats(page)).toBe(1);
    await expect(sidebar.items).toHaveCount(0);

    await chat.send('what is this? [[words:20]]');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.userMessages.first().getByTestId('message-image')).toBeVisible();
    await expect(chat.lastReply()).toContainText('I see 1 image: png 64x48.');
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveCount(0);
    await expect(sidebar.items).toHaveCount(1);
    await chat.waitForIdle();
    // Sent: neither the chat's composer nor the start page brings the image back.
    await chat.reload();
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveCount(0);
    await chat.openStartPage();
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveCount(0);
    expect(await storedChats(page)).toBe(1);
  });

  test('a paste and a drop on the start page attach too', async ({ chat, page }) => {
    await chat.openStartPage();
    await fileEvent(page, 'paste', 'pasted.png', realPng(40, 30));
    await fileEvent(page, 'drop', 'dropped.png', realPng(20, 10));
    await expectUploaded(chat, 2);
    await chat.send('two of them [[words:20]]');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.userMessages.first().getByTestId('message-image')).toHaveCount(2);
    await expect(chat.lastReply()).toContainText('I see 2 images: png 40x30, png 20x10.');
  });

  test('the text and the images survive a reload until the first message is sent', async ({ chat, page }) => {
    await chat.openStartPage();
    await page.getByTestId('attach-input').setInputFiles({
      name: 'kept.png',
      mimeType: 'image/png',
      buffer: realPng(32, 32),
    });
    await expectUploaded(chat, 1);
    await chat.composerInput.fill('still here after a reload [[words:20]]');
    await chat.reload();
    await expect(chat.composerInput).toHaveValue('still here after a reload [[words:20]]');
    await expectUploaded(chat, 1);
    await expect(chat.composer.getByRole('img', { name: 'kept.png' })).toBeVisible();

    await chat.composerInput.press('Enter');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.lastReply()).toContainText('I see 1 image: png 32x32.');
  });

  test('an abandoned first message does not clutter the list: the start page keeps using its chat', async ({
    chat,
    sidebar,
    page,
  }) => {
    await chat.startThread('an earlier chat [[words:3]]');
    await chat.waitForIdle();
    await chat.openStartPage();
    await page.getByTestId('attach-input').setInputFiles({
      name: 'abandoned.png',
      mimeType: 'image/png',
      buffer: realPng(16, 16),
    });
    await expectUploaded(chat, 1);
    expect(await storedChats(page)).toBe(2);

    // Left for another chat, then back: the same image, the same (unlisted) chat.
    await sidebar.items.first().getByRole('link').click();
    await page.waitForURL(/\/chat\/[^/]+$/);
    await page.getByTestId('new-chat').click();
    await expectUploaded(chat, 1);
    await expect(sidebar.items).toHaveCount(1);

    // Removed and attached again: still no new chat.
    await chat.composer.getByRole('button', { name: 'Remove abandoned.png' }).click();
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveCount(0);
    await page.getByTestId('attach-input').setInputFiles({
      name: 'again.png',
      mimeType: 'image/png',
      buffer: realPng(16, 16),
    });
    await expectUploaded(chat, 1);
    expect(await storedChats(page)).toBe(2);
    await expect(sidebar.items).toHaveCount(1);
  });

  test('a guest who signs up before sending keeps the image; the next person signed in here does not get it', async ({
    chat,
    page,
  }) => {
    await chat.openStartPage();
    await page.getByTestId('attach-input').setInputFiles({
      name: 'before-signup.png',
      mimeType: 'image/png',
      buffer: realPng(24, 24),
    });
    await expectUploaded(chat, 1);
    const account = new AccountPages(page);
    const email = `first-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.test`;
    await account.open('/sign-up');
    await account.submit('/sign-up', email, 'correct horse battery');
    await page.waitForURL((url) => url.pathname === '/');
    await expect(account.menuButton).toHaveAccessibleName(`Account menu: ${email}`);
    // The chat moved to the account with the guest's: still the start page's, image and all.
    await expectUploaded(chat, 1);
    await chat.send('kept across the sign-up [[words:20]]');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.lastReply()).toContainText('I see 1 image: png 24x24.');

    // Another image left on the start page, then this person signs out and another one comes.
    await chat.openStartPage();
    await page.getByTestId('attach-input').setInputFiles({
      name: 'private.png',
      mimeType: 'image/png',
      buffer: realPng(24, 24),
    });
    await expectUploaded(chat, 1);
    await account.signOut();
    await page.goto('/');
    await chat.waitUntilReady();
    await expect(account.menuButton).toHaveAccessibleName('Account menu: Guest');
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveCount(0);
  });
});
