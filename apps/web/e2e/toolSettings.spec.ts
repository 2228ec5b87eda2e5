import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';

/** The chat's tool settings panel (T1), opened from the composer. */
function toolPanel(page: Page) {
  return {
    open: page.getByTestId('tool-settings-open'),
    panel: page.getByTestId('tool-settings'),
    /** The radio of `mode` ("Off", "Ask", "Allow") in the group of tool `name`. */
    mode: (name: string, mode: string) =>
      page.getByRole('group', { name }).getByRole('radio', { name: mode, exact: true }),
  };
}

test.describe('tool settings (T1)', () => {
  test('a tool switched off is not offered, and another tab follows the change', async ({
    chat,
    context,
  }) => {
    const url = await chat.startThread('hello [[words:3]]');
    await chat.waitForIdle();
    const tools = toolPanel(chat.page);
    // Every tool starts on (the MCP server's too, asking); switching one off leaves one fewer.
    await expect(tools.open).toHaveAccessibleName(/^Tools: (\d+) of \1 on$/);
    const total = Number((await tools.open.getAttribute('aria-label'))?.match(/of (\d+)/)?.[1]);
    await tools.open.click();
    await expect(tools.mode('current_time', 'Allow')).toBeChecked();
    await expect(tools.mode('save_note', 'Ask')).toBeChecked();

    const other = await context.newPage();
    const otherChat = new ChatPage(other);
    await other.goto(url);
    await otherChat.waitUntilReady();

    await tools.mode('current_time', 'Off').click();
    await expect(tools.mode('current_time', 'Off')).toBeChecked();
    await chat.page.keyboard.press('Escape');
    await expect(tools.open).toHaveAccessibleName(`Tools: ${total - 1} of ${total} on`);
    // The other tab reads the change on the thread's event.
    await expect(toolPanel(other).open).toHaveAccessibleName(`Tools: ${total - 1} of ${total} on`);

    await chat.send('time? [[tool:current_time]] [[words:12]]');
    await expect(
      chat.assistantMessages.filter({ hasText: 'I have no tool named current_time.' }),
    ).toHaveCount(1);
    await chat.waitForIdle();

    // Stored on the server: a reload shows it.
    await chat.reload();
    await toolPanel(chat.page).open.click();
    await expect(toolPanel(chat.page).mode('current_time', 'Off')).toBeChecked();
  });

  test('"Allow for this chat" approves the call and the next note is saved without asking', async ({
    chat,
  }) => {
    await chat.startThread('remember the milk [[tool:save_note]] [[words:12]]');
    const allow = chat.page.getByRole('button', { name: 'Allow for this chat' });
    await expect(allow).toBeVisible();
    await allow.click();
    await expect(chat.assistantMessages.filter({ hasText: 'The tool save_note returned' })).toHaveCount(1);
    await chat.waitForIdle();
    const tools = toolPanel(chat.page);
    await tools.open.click();
    await expect(tools.mode('save_note', 'Allow')).toBeChecked();
    await chat.page.keyboard.press('Escape');

    await chat.send('remember the bread [[tool:save_note]] [[words:12]]');
    await expect(chat.assistantMessages.filter({ hasText: 'The tool save_note returned' })).toHaveCount(2);
    await expect(chat.page.getByRole('button', { name: 'Approve', exact: true })).toHaveCount(0);
    await chat.waitForIdle();
    await expect(chat.page.getByTestId('notes-button')).toHaveText('Notes (2)');
  });
});
