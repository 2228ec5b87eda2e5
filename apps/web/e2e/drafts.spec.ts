import { expect, test } from './fixtures';
import { threadIdOf } from './pages/Sidebar';

/** Nothing a person typed is lost: drafts survive a reload, a failed send keeps its text. */
test.describe('nothing typed is lost', () => {
  test('a draft survives a reload, per chat and on the start page, until it is sent', async ({
    chat,
    page,
  }) => {
    await chat.openStartPage();
    await chat.composerInput.fill('half a thought on the start page');
    await chat.reload();
    await expect(chat.composerInput).toHaveValue('half a thought on the start page');

    const url = await chat.startThread('[[words:3]] first');
    await chat.waitForIdle();
    await chat.composerInput.fill('a draft for this chat\nwith two lines');
    await chat.reload();
    await expect(chat.composerInput).toHaveValue('a draft for this chat\nwith two lines');

    // Another chat has its own (empty) draft; coming back shows this one again.
    await chat.openStartPage();
    await expect(chat.composerInput).toHaveValue('');
    await page.goto(url);
    await chat.waitUntilReady();
    await expect(chat.composerInput).toHaveValue('a draft for this chat\nwith two lines');

    // Sent: the draft is gone, also after a reload.
    await chat.composerInput.fill('[[words:3]] sent now');
    await chat.composerInput.press('Enter');
    await expect(chat.userMessages).toHaveCount(2);
    await chat.waitForIdle();
    await chat.reload();
    await expect(chat.composerInput).toHaveValue('');
    expect(threadIdOf(page.url())).toBe(threadIdOf(url));
  });

  test('a send that cannot reach the server keeps its text, and Retry reuses its clientRequestId', async ({
    chat,
    page,
  }) => {
    const url = await chat.startThread('[[words:3]] hello');
    await chat.waitForIdle();
    const sendPath = `/api/threads/${threadIdOf(url)}/turns`;
    const sent: Array<{ clientRequestId: string; text: string }> = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === sendPath)
        sent.push(request.postDataJSON());
    });

    // The network drops the send: the text goes back in the composer and the banner says so.
    await page.route(`**${sendPath}`, (route) => route.abort('internetdisconnected'));
    await chat.send('[[words:12]] do not lose me');
    await expect(chat.errorBanner).toContainText('your message is back in the box');
    await expect(chat.composerInput).toHaveValue('[[words:12]] do not lose me');
    await expect(chat.userMessages).toHaveCount(1);

    // Retry while the network is still down: it fails the same way, the text is still there once.
    await chat.errorBanner.getByRole('button', { name: 'Retry' }).click();
    await expect(chat.errorBanner).toContainText('your message is back in the box');
    await expect(chat.composerInput).toHaveValue('[[words:12]] do not lose me');

    // Dismissing the banner keeps the text too.
    await chat.errorBanner.getByRole('button', { name: 'Close' }).click();
    await expect(chat.composerInput).toHaveValue('[[words:12]] do not lose me');

    // This time the server gets the send but its answer is lost on the way back. The turn shows
    // up in the thread's events, so the tab knows it was sent after all and lets the text go.
    await page.unroute(`**${sendPath}`);
    await page.route(`**${sendPath}`, async (route) => {
      await route.fetch();
      await route.abort('connectionreset');
    });
    await chat.composerInput.press('Enter');
    await expect(chat.repliesTo('do not lose me')).toHaveCount(1);
    await expect(chat.composerInput).toHaveValue('');
    await expect(chat.errorBanner).toBeHidden();
    await chat.waitForIdle();

    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((body) => body.clientRequestId)).size).toBe(1);
    await chat.reload();
    await expect(chat.userMessages).toHaveCount(2);
    await expect(chat.repliesTo('do not lose me')).toHaveCount(1);
  });

  test('a first message that cannot be stored stays in the start page composer', async ({ chat, page }) => {
    await chat.openStartPage();
    await page.route('**/api/threads', (route) =>
      route.request().method() === 'POST' ? route.abort('internetdisconnected') : route.fallback(),
    );
    await chat.send('my first words');
    await expect(chat.errorBanner).toContainText('still in the box');
    await expect(chat.composerInput).toHaveValue('my first words');
    await expect(page).toHaveURL(/\/$/);

    await page.unroute('**/api/threads');
    await chat.composerInput.press('Enter');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.userMessages.first()).toContainText('my first words');
  });
});
