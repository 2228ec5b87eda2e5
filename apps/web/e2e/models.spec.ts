import { expect, test } from './fixtures';

/**
 * The chat's model and instructions (M2-M4). The API offers two models here (playwright.config.ts):
 * `local` (the default, the built-in model under its own label, "Demo model (scripted replies)")
 * and `Local B`, the same built-in model under another id and label.
 */
test.describe('models and instructions per chat', () => {
  test('picks a model for the next reply, regenerates with another, and keeps instructions for the chat and the account', async ({
    chat,
    page,
  }) => {
    await chat.startThread('first question [[words:6]]');
    await chat.waitForIdle();
    await expect(chat.lastReply().getByTestId('message-model')).toHaveText('· Demo model (scripted replies)');

    // The picker in the composer: the next reply is written by the model picked.
    const picker = page.getByTestId('model-picker');
    await expect(picker).toContainText('Demo model (scripted replies)');
    await picker.click();
    await page.getByRole('option', { name: 'Local B' }).click();
    await expect(picker).toContainText('Local B');
    await chat.send('second question [[words:6]]');
    await expect(chat.repliesTo('second question')).toHaveCount(1);
    await chat.waitForIdle();
    await expect(chat.lastReply().getByTestId('message-model')).toHaveText('· Local B');

    // Regenerate's menu: the new version is written by the model chosen there; the chat keeps its own.
    await chat.lastReply().getByTestId('regenerate-with').click();
    await page.getByRole('menuitem', { name: 'Demo model (scripted replies)', exact: true }).click();
    await chat.waitForIdle();
    await expect(chat.versionLabel(chat.userMessages.last())).toHaveText('2 / 2');
    await expect(chat.lastReply().getByTestId('message-model')).toHaveText('· Demo model (scripted replies)');
    await expect(picker).toContainText('Local B');

    // The chat's instructions, from the chat menu; kept across a reload.
    await page.getByTestId('chat-menu').click();
    await page.getByRole('menuitem', { name: 'Instructions for this chat' }).click();
    await page.getByTestId('instructions-input').fill('Answer like a pirate.');
    await page.getByTestId('instructions-save').click();
    await expect(page.getByTestId('instructions-input')).toHaveCount(0);
    await chat.reload();
    await expect(page.getByTestId('model-picker')).toContainText('Local B');
    await page.getByTestId('chat-menu').click();
    await page.getByRole('menuitem', { name: 'Edit instructions for this chat' }).click();
    await expect(page.getByTestId('instructions-input')).toHaveValue('Answer like a pirate.');
    await page.keyboard.press('Escape');

    // The account's instructions, on the account page; kept across a reload.
    await page.goto('/settings/account');
    const account = page.getByTestId('account-instructions');
    await expect(account).toBeEnabled();
    await account.fill('I prefer short answers.');
    await page.getByTestId('account-instructions-save').click();
    await expect(page.getByText('Instructions saved', { exact: true })).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('account-instructions')).toHaveValue('I prefer short answers.');
    await expect(page.getByTestId('error-banner')).toHaveCount(0);
  });
});

test.describe('the model of a new chat', () => {
  test('the start page has the picker: the first message runs on the model picked there, and a long name shows whole on a desktop', async ({
    chat,
    page,
  }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await chat.openStartPage();
    const picker = page.getByTestId('model-picker');
    await expect(picker).toContainText('Demo model (scripted replies)');
    await picker.click();
    await page.getByRole('option', { name: 'Built-in with a long name (8k window)' }).click();
    // The whole name, not cut with an ellipsis.
    await expect(picker).toContainText('Built-in with a long name (8k window)');
    const cut = await picker.evaluate((element) =>
      [element, ...Array.from(element.querySelectorAll('*'))].some(
        (node) => node.scrollWidth > node.clientWidth + 1,
      ),
    );
    expect(cut).toBe(false);

    await chat.composerInput.fill('first question [[words:6]]');
    await chat.composerInput.press('Enter');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.repliesTo('first question')).toHaveCount(1);
    await chat.waitForIdle();
    await expect(chat.lastReply().getByTestId('message-model')).toHaveText(
      '· Built-in with a long name (8k window)',
    );
    await expect(picker).toContainText('Built-in with a long name (8k window)');

    // The next new chat starts with the model picked last, and its picker says so.
    await chat.openStartPage();
    await expect(picker).toContainText('Built-in with a long name (8k window)');
  });
});
