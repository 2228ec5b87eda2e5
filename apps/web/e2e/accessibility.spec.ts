import { expect, test } from './fixtures';
import { ShareDialog } from './pages/ShareDialog';
import { recordAnnouncements } from './support/announcements';
import { seriousViolations } from './support/axe';
import { pdfBytes } from './support/documents';
import { realPng } from './support/images';

for (const colorScheme of ['light', 'dark'] as const) {
  test.describe(`accessibility (${colorScheme})`, () => {
    test.use({ colorScheme });

    test('the start page: landmarks, one h1, lang, no serious violations', async ({ chat, page }) => {
      await chat.openStartPage();
      await expect(page.locator('html')).toHaveAttribute('lang', 'en');
      await expect(page.getByRole('main')).toHaveCount(1);
      await expect(page.getByRole('heading', { level: 1 })).toHaveCount(1);
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('a chat with a Dock and a full queue', async ({ chat, dock, page }) => {
      await chat.startThread('[[words:2000]] [[delay:30]] busy');
      for (let n = 1; n <= 5; n++) {
        await chat.send(`queued ${n}`);
        await expect(dock.items).toHaveCount(n);
      }
      await expect(chat.queueFullNotice).toBeVisible();
      await expect(page.getByRole('heading', { level: 1 })).toHaveCount(1);
      expect(await seriousViolations(page)).toEqual([]);
      await chat.stopButton.click();
    });

    test('an item’s menu in the Dock, and the Dock while picking messages to merge', async ({
      chat,
      dock,
      page,
    }) => {
      // A reply long enough that nothing leaves the queue while the checks run.
      await chat.startThread('[[words:3000]] [[delay:30]] busy');
      for (const text of ['first', 'second', 'third']) await chat.send(text);
      await expect(dock.items).toHaveCount(3);
      await dock.menuButton(1).click();
      await expect(page.getByRole('menuitem', { name: 'Run next' })).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole('menuitem', { name: /Merge with other messages/ }).click();
      await dock.item(2).getByTestId('queue-item-pick').click();
      await expect(dock.root.getByRole('button', { name: 'Merge into one message' })).toBeEnabled();
      expect(await seriousViolations(page)).toEqual([]);
      await chat.stopButton.click();
    });

    test('a reply waiting for an approval, and decided tool calls opened', async ({ chat, page }) => {
      await chat.startThread('what time is it [[steps:2]] [[delay:0]] [[words:4]]');
      await chat.waitForIdle();
      await chat.lastReply().getByTestId('tool-call-toggle').click();
      await expect(chat.lastReply().getByTestId('tool-call-details')).toBeVisible();
      await chat.send('keep this [[tool:save_note]] [[words:4]]');
      await expect(page.getByRole('button', { name: 'Approve', exact: true })).toBeVisible();
      await chat.send('waits for the approval');
      await expect(page.getByTestId('queue-dock')).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('the tool settings panel (T1, T3)', async ({ chat, page }) => {
      await chat.startThread('[[words:3]] hello');
      await chat.waitForIdle();
      await page.getByTestId('tool-settings-open').click();
      await expect(page.getByTestId('tool-settings')).toBeVisible();
      // With an MCP server's tools and an unavailable server (T3) in it.
      await expect(page.getByTestId('tool-section-mcp-fixture')).toBeVisible();
      await expect(page.getByTestId('tool-server-broken')).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('the image viewer', async ({ chat, page }) => {
      await chat.startThread('[[words:3]] hello');
      await chat.waitForIdle();
      await page.getByTestId('attach-input').setInputFiles([
        { name: 'one.png', mimeType: 'image/png', buffer: realPng(80, 60) },
        { name: 'two.png', mimeType: 'image/png', buffer: realPng(60, 80) },
      ]);
      for (const thumb of await chat.composer.getByTestId('attachment-thumb').all())
        await expect(thumb).toHaveAttribute('data-state', 'ready');
      await chat.send('two pictures [[words:3]]');
      await chat.waitForIdle();
      await chat.userMessages.last().getByTestId('message-image').first().click();
      await expect(page.getByTestId('image-viewer')).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('the version controls and an interrupted reply', async ({ chat, page }) => {
      await chat.startThread('[[words:1000]] [[delay:30]] first');
      await expect(chat.lastReply()).toContainText('You said');
      await chat.stopButton.click();
      await expect(chat.interruptedBadge(chat.lastReply())).toBeVisible();
      await chat.editMessage(chat.userMessages.first(), '[[words:3]] second');
      await chat.waitForIdle();
      await expect(chat.versionLabel()).toHaveText('2 / 2');
      await chat.previousVersion();
      await expect(chat.interruptedBadge(chat.lastReply())).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('the search and shortcut dialogs', async ({ chat, page }) => {
      await chat.openStartPage();
      await page.keyboard.press('Control+K');
      await expect(page.getByRole('dialog', { name: 'Search chats' })).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+/');
      await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);
    });

    test('the share page, read by someone without a session', async ({ chat, page, browser }) => {
      // A reply with everything the renderer draws: headings, a list, a table, code, a link.
      await chat.startThread('[[markdown]] [[delay:0]] for the share page');
      await chat.waitForIdle();
      await expect(chat.lastReply().locator('[data-code-block]')).toHaveCount(1);
      const share = new ShareDialog(page);
      await share.open();
      const url = await share.createLink();
      await share.close();

      const reader = await browser.newContext({ colorScheme });
      const shared = await reader.newPage();
      await shared.goto(url);
      await expect(shared.locator('html[data-hydrated="true"]')).toBeAttached();
      await expect(shared.getByTestId('transcript').locator('[data-code-block]')).toHaveCount(1);
      // Highlighted (highlight.js arrived) before the colours are judged.
      await expect(shared.locator('[data-code-block] [class^="hljs-"]').first()).toBeAttached();
      await expect(shared.locator('html')).toHaveAttribute('lang', 'en');
      await expect(shared.getByRole('main')).toHaveCount(1);
      await expect(shared.getByRole('heading', { level: 1 })).toHaveCount(1);
      expect(await seriousViolations(shared)).toEqual([]);
      await reader.close();
    });

    test('the share page of a chat with documents, on a desktop and a phone', async ({
      chat,
      page,
      browser,
    }) => {
      await chat.startThread('read this first [[words:4]]');
      await expect(chat.lastReply()).toContainText('You said');
      await chat.waitForIdle();
      await page.getByTestId('attach-input').setInputFiles([
        {
          name: 'report.pdf',
          mimeType: 'application/pdf',
          buffer: pdfBytes(['Quarterly report', 'Revenue grew']),
        },
        { name: 'plan.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plan\n\nShip it.\n') },
      ]);
      const attached = chat.composer.getByTestId('attachment-thumb');
      await expect(attached).toHaveCount(2);
      for (const index of [0, 1]) await expect(attached.nth(index)).toHaveAttribute('data-state', 'ready');
      await chat.send('summarise these [[words:6]]');
      await expect(chat.userMessages).toHaveCount(2);
      await chat.waitForIdle();
      const share = new ShareDialog(page);
      await share.open();
      const url = await share.createLink();
      await share.close();

      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 390, height: 844 },
      ]) {
        const reader = await browser.newContext({ colorScheme, viewport });
        const shared = await reader.newPage();
        await shared.goto(url);
        await expect(shared.locator('html[data-hydrated="true"]')).toBeAttached();
        const chips = shared.getByTestId('message-document');
        await expect(chips).toHaveCount(2);
        // The chips say what they said in the chat: the PDF its pages, the text its size.
        await expect(chips.nth(0).getByTestId('document-detail')).toHaveText('PDF · 2 pages');
        await expect(chips.nth(1).getByTestId('document-detail')).toHaveText(/^Markdown · \d+ B$/);
        await expect(shared.getByRole('link', { name: 'Open report.pdf PDF · 2 pages' })).toBeVisible();
        expect(await seriousViolations(shared)).toEqual([]);
        await reader.close();
      }
    });
  });
}

// The pages people use every day, on a phone too (390x844, touch): the chat with a reply and a
// paused queue, and the account's settings.
for (const colorScheme of ['light', 'dark'] as const) {
  test.describe(`accessibility on a phone (${colorScheme})`, () => {
    test.use({ colorScheme, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

    test('a chat with a reply and a paused queue, and the settings page: no serious violations', async ({
      chat,
      dock,
      page,
    }) => {
      await chat.startThread('[[words:2000]] [[delay:30]] busy');
      await chat.send('queued one');
      await expect(dock.items).toHaveCount(1);
      await chat.stopButton.click();
      await expect(page.getByRole('button', { name: 'Resume' })).toBeVisible();
      expect(await seriousViolations(page)).toEqual([]);

      await page.goto('/settings/account');
      await expect(page.getByRole('heading', { level: 1 })).toHaveCount(1);
      expect(await seriousViolations(page)).toEqual([]);
    });
  });
}

test('a finished reply and queue changes are announced, not every word', async ({ chat, dock, page }) => {
  const announcements = await recordAnnouncements(page);
  await chat.startThread('[[words:400]] [[delay:30]] announce');
  await chat.send('queued');
  await dock.expectTexts(['queued']);
  await expect.poll(announcements).toContain('1 queued.');
  // A finished reply is announced with its first sentence, and the queue moving on after it.
  await expect.poll(announcements, { timeout: 30_000 }).toContain('Reply finished: You said: "announce".');
  await expect.poll(announcements, { timeout: 30_000 }).toContain('Reply finished: You said: "queued".');
  expect((await announcements()).filter((text) => text.includes('You said'))).toEqual([
    'Reply finished: You said: "announce".',
    'Reply finished: You said: "queued".',
  ]);
});

test('the two sidebar toggles have different names', async ({ chat, page }) => {
  await chat.openStartPage();
  const names = await page
    .getByRole('button')
    .evaluateAll((buttons) =>
      buttons.map((button) => button.getAttribute('aria-label') ?? button.textContent?.trim() ?? ''),
    );
  expect(names.filter((name) => name === 'Collapse sidebar')).toHaveLength(1);
});
