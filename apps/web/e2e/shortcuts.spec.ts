import { expect, test } from './fixtures';

test.describe('keyboard', () => {
  test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

  test('the shortcuts work and are listed in a help dialog', async ({ chat, page }) => {
    await chat.openStartPage();
    // Outside a text field (Esc leaves the composer), `?` opens the list.
    await chat.composerInput.press('Escape');
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await expect(help).toBeVisible();
    await expect(help).toContainText('Search chats');
    await expect(help).toContainText('Copy the last reply');
    await page.keyboard.press('Escape');
    await expect(help).toBeHidden();
    await page.keyboard.press('Control+/');
    await expect(help).toBeVisible();
    await page.keyboard.press('Escape');

    // A new chat's first message: the keyboard stays in the composer across the URL change.
    await chat.startThread('[[words:1000]] [[delay:30]] keep going');
    await expect(chat.composerInput).toBeFocused();

    // Esc in the message box (where the keyboard is after a send) stops the reply.
    await chat.composerInput.press('Escape');
    await chat.waitForIdle();
    await expect(chat.interruptedBadge(chat.lastReply())).toBeVisible();
    // Outside a text field too.
    await chat.send('[[words:1000]] [[delay:30]] again');
    await expect(chat.stopButton).toBeVisible();
    await chat.lastReply().click();
    await page.keyboard.press('Escape');
    await chat.waitForIdle();
    await expect(chat.interruptedBadge(chat.lastReply())).toBeVisible();

    // Shift+Esc brings the keyboard back to the composer.
    await page.keyboard.press('Shift+Escape');
    await expect(chat.composerInput).toBeFocused();

    // Ctrl+Shift+C copies the last reply as Markdown.
    // The tab shows the server's copy of the cut reply once it settles (it may hold a word or two
    // more than had streamed here), so copy again until the clipboard and the page agree.
    await expect
      .poll(async () => {
        await page.keyboard.press('Control+Shift+C');
        const copied = await page.evaluate(() => navigator.clipboard.readText());
        return copied === (await chat.replyText(chat.lastReply()));
      })
      .toBe(true);

    // Ctrl+Shift+O: a new chat (the start page), composer focused, nothing stored.
    await page.keyboard.press('Control+Shift+O');
    await expect(page).toHaveURL(/\/$/);
    await expect(chat.composerInput).toBeFocused();
  });

  test("Esc in a queued item's editor gives the keyboard back to the item", async ({ chat, dock }) => {
    await chat.startThread('[[words:1000]] [[delay:30]] long');
    await chat.send('queued one');
    await dock.expectTexts(['queued one']);
    const editor = await dock.startEditing(0);
    await editor.press('Escape');
    await expect(dock.item(0).getByRole('button', { name: 'Edit', exact: true })).toBeFocused();
    await chat.stopButton.click();
  });

  test('switching versions keeps the keyboard on the version control', async ({ chat, page }) => {
    await chat.startThread('[[words:3]] one');
    await chat.waitForIdle();
    await chat.editMessage(chat.userMessages.first(), '[[words:3]] two');
    await chat.waitForIdle();
    await expect(chat.versionLabel()).toHaveText('2 / 2');

    await chat.previousVersionButton().click();
    await expect(chat.versionLabel()).toHaveText('1 / 2');
    await expect(chat.nextVersionButton()).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(chat.versionLabel()).toHaveText('2 / 2');
    await expect(chat.previousVersionButton()).toBeFocused();
  });
});
