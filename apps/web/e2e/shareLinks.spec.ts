import { expect, test } from './fixtures';
import { ShareDialog } from './pages/ShareDialog';

/** The token of a share link (`/share/:token`). */
function tokenOf(url: string): string {
  return new URL(url).pathname.split('/').at(-1) ?? '';
}

test.describe('share links (H1)', () => {
  test('Revoke asks first: Cancel keeps the link working, confirming revokes it', async ({ chat, page }) => {
    await chat.startThread('Share and then revoke [[words:5]]');
    await chat.waitForIdle();
    const share = new ShareDialog(page);
    await share.open();
    const url = await share.createLink();
    const readShare = async () => (await page.request.get(`/api/shares/${tokenOf(url)}`)).status();

    await share.item(url).getByRole('button', { name: 'Revoke', exact: true }).click();
    const confirm = share.item(url).getByRole('button', { name: 'Revoke link', exact: true });
    await expect(confirm).toBeVisible();
    await expect(share.item(url)).toContainText(
      'Revoke this link? People who have it will not be able to open it any more.',
    );
    // Asking changed nothing yet.
    expect(await readShare()).toBe(200);
    // The keyboard lands on the safe choice.
    await expect(share.item(url).getByRole('button', { name: 'Cancel', exact: true })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(confirm).toBeHidden();
    await expect(share.item(url)).toHaveCount(1);
    expect(await readShare()).toBe(200);

    await share.revoke(url);
    expect(await readShare()).toBe(404);
  });

  for (const viewport of [
    { width: 1440, height: 900 },
    { width: 390, height: 844 },
  ]) {
    test(`a shared long chat opens at the top, its header in view (${viewport.width}x${viewport.height})`, async ({
      chat,
      page,
      browser,
    }) => {
      await chat.startThread('A long answer to share [[words:900]] [[delay:0]]');
      await chat.waitForIdle();
      const share = new ShareDialog(page);
      await share.open();
      const url = await share.createLink();
      await share.close();

      const reader = await browser.newContext({ viewport });
      const shared = await reader.newPage();
      await shared.goto(url);
      await expect(shared.getByTestId('transcript').locator('article')).toHaveCount(2);
      // Two frames after the messages are in, whatever scrolls on mount has scrolled.
      await shared.evaluate(
        () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
      );
      expect(await shared.evaluate(() => document.scrollingElement?.scrollTop ?? window.scrollY)).toBe(0);
      await expect(shared.getByTestId('shared-title')).toBeInViewport();
      await expect(shared.getByTestId('shared-title')).toHaveText('A long answer to share');
      await reader.close();
    });
  }
});
