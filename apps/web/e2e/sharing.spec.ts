import type { Browser, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { Feedback } from './pages/Feedback';
import { ShareDialog } from './pages/ShareDialog';

/** A fresh browser: no cookies, no storage, nothing of the owner's session. */
async function openAsStranger(
  browser: Browser,
  url: string,
): Promise<{ page: Page; authRequests: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const authRequests: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/auth')) authRequests.push(request.url());
  });
  await page.goto(url);
  await expect(page.locator('html[data-hydrated="true"]')).toBeAttached();
  return { page, authRequests };
}

test.describe('sharing a chat (H1)', () => {
  test('a link opens a read-only snapshot for anyone, copies, and stops working once revoked', async ({
    chat,
    page,
    context,
    browser,
  }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await chat.startThread('Share this recipe [[words:12]]');
    await expect(chat.lastReply()).toContainText('You said: "Share this recipe"');
    await chat.waitForIdle();
    const reply = await chat.replyText(chat.lastReply());

    const share = new ShareDialog(page);
    await share.open();
    const url = await share.createLink();
    expect(new URL(url).origin).toBe(new URL(page.url()).origin);
    // Creating a link copies it; the Copy button copies it again.
    await expect(share.dialog.getByRole('button', { name: 'Copied' })).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await share.dialog.getByRole('button', { name: 'Copied' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await expect(share.item(url)).toHaveCount(1);
    await share.close();

    // Later messages are not in the snapshot.
    await chat.send('A later secret message [[words:8]]');
    await expect(chat.lastReply()).toContainText('You said: "A later secret message"');
    await chat.waitForIdle();

    const stranger = await openAsStranger(browser, url);
    const shared = stranger.page;
    await expect(shared.getByTestId('shared-title')).toHaveText('Share this recipe');
    const messages = shared.getByTestId('transcript').locator('article');
    await expect(messages).toHaveCount(2);
    await expect(messages.nth(0)).toHaveText('Share this recipe [[words:12]]');
    await expect(messages.nth(1).getByTestId('message-text')).toHaveText(reply);
    await expect(shared.getByText('A later secret message')).toHaveCount(0);
    // Read-only: no composer, Dock, sidebar, version controls, message or feedback actions.
    for (const absent of ['composer', 'queue-dock', 'message-actions', 'feedback', 'share-button']) {
      await expect(shared.getByTestId(absent), absent).toHaveCount(0);
    }
    await expect(shared.getByRole('textbox')).toHaveCount(0);
    await expect(shared.locator('meta[name="robots"]')).toHaveAttribute('content', /noindex/);
    // No guest account was made for the reader.
    expect(stranger.authRequests).toEqual([]);
    expect(await shared.context().cookies()).toEqual([]);

    await share.open();
    await share.revoke(url);
    await share.close();
    await shared.reload();
    await expect(shared.getByText('This link is no longer available')).toBeVisible();
    await expect(shared.getByTestId('transcript')).toHaveCount(0);
    await shared.context().close();
  });

  test('a link made while the list of links is still loading stays listed', async ({ chat, page }) => {
    await chat.startThread('Share this plan [[words:5]]');
    await chat.waitForIdle();
    // The list answers slowly, as on a busy server: it was asked for before the link was made.
    let releaseList: () => void = () => {};
    const listHeld = new Promise<void>((resolve) => {
      releaseList = resolve;
    });
    await page.route(/\/api\/threads\/[^/]+\/shares$/, async (route) => {
      if (route.request().method() !== 'GET') return await route.continue();
      const answer = await route.fetch();
      await listHeld;
      await route.fulfill({ response: answer });
    });
    const share = new ShareDialog(page);
    await share.open();
    const url = await share.createLink();
    releaseList();
    await expect(share.item(url)).toHaveCount(1);
    await expect(share.dialog.getByText('No live links.')).toHaveCount(0);
  });

  test('an unknown link shows that it is not available', async ({ page }) => {
    await page.goto('/share/no-such-token-at-all-here');
    await expect(page.getByText('This link is no longer available')).toBeVisible();
  });
});

test.describe('feedback on replies (H2)', () => {
  test('thumbs down with a comment persists across a reload and shows in a second tab', async ({
    chat,
    page,
    context,
  }) => {
    const url = await chat.startThread('Rate this answer [[words:6]]');
    await expect(chat.lastReply()).toContainText('You said: "Rate this answer"');
    await chat.waitForIdle();

    const second = await context.newPage();
    await second.goto(url);
    await expect(second.locator('article[data-role="assistant"]')).toHaveCount(1);

    const feedback = new Feedback(chat.lastReply());
    await feedback.expectRating(null);
    await feedback.up.click();
    await feedback.expectRating('up');
    await feedback.downWithComment('Too short, and it repeats me.');
    await feedback.expectRating('down');

    // The other tab follows without a reload.
    const elsewhere = new Feedback(second.locator('article[data-role="assistant"]').last());
    await elsewhere.expectRating('down');
    await expect(elsewhere.commentText).toHaveText('Too short, and it repeats me.');

    await chat.reload();
    const reloaded = new Feedback(chat.lastReply());
    await reloaded.expectRating('down');
    await expect(reloaded.commentText).toHaveText('Too short, and it repeats me.');

    // Choosing the same thumb again clears it, everywhere.
    await reloaded.down.click();
    await reloaded.expectRating(null);
    await expect(reloaded.commentText).toHaveCount(0);
    await elsewhere.expectRating(null);
    await expect(page.getByTestId('error-banner')).toHaveCount(0);
  });

  test('a reply that is still streaming has no thumbs yet', async ({ chat }) => {
    await chat.startThread('Keep going [[words:1000]] [[delay:30]]');
    await expect(chat.lastReply()).toContainText('You said: "Keep going"');
    await expect(chat.lastReply().getByTestId('feedback')).toHaveCount(0);
    await chat.stopButton.click();
    await chat.waitForIdle();
    await expect(chat.lastReply().getByTestId('feedback')).toHaveCount(1);
  });
});
