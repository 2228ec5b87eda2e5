import { expect, test } from './fixtures';
import { threadIdOf } from './pages/Sidebar';

test.describe('finding chats', () => {
  test('New chat stores nothing until the first message is sent', async ({ chat, sidebar, page }) => {
    await chat.startThread('[[words:3]] existing');
    await chat.waitForIdle();
    const before = (await (await page.request.get('/api/threads')).json()) as unknown;
    const count = (list: unknown) =>
      (Array.isArray(list) ? list : (list as { threads: unknown[] }).threads).length;

    await page.getByTestId('new-chat').click();
    await expect(page).toHaveURL(/\/$/);
    await expect(chat.composerInput).toBeFocused();
    await page.getByTestId('new-chat').click();
    await expect(sidebar.items).toHaveCount(1);
    expect(count(await (await page.request.get('/api/threads')).json())).toBe(count(before));

    await chat.send('[[words:3]] now it exists');
    await page.waitForURL(/\/chat\//);
    await expect(sidebar.items).toHaveCount(2);
  });

  test('chats are grouped by date in the sidebar', async ({ chat, sidebar }) => {
    await chat.startThread('[[words:3]] grouped');
    await expect(sidebar.root.getByRole('heading', { name: 'Today' })).toBeVisible();
    await expect(sidebar.root.getByTestId('thread-group')).toHaveCount(1);
  });

  test('Ctrl+K searches chats by title and message text as you type', async ({ chat, page }) => {
    const first = await chat.startThread('[[words:3]] about pelicans');
    await chat.waitForIdle();
    await chat.send('[[words:3]] and the word zanzibar inside');
    await chat.waitForIdle();
    await chat.startThread('[[words:3]] about herons');
    await chat.waitForIdle();

    await page.keyboard.press('Control+K');
    const dialog = page.getByRole('dialog', { name: 'Search chats' });
    const input = dialog.getByRole('textbox', { name: 'Search chats' });
    await expect(input).toBeFocused();
    await input.pressSequentially('zanzi');
    const results = dialog.getByTestId('search-result');
    await expect(results).toHaveCount(1);
    await expect(results.first()).toContainText('about pelicans');
    await expect(results.first()).toContainText('zanzibar');

    await input.fill('about');
    await expect(results).toHaveCount(2);
    await input.fill('nothing like this');
    await expect(dialog).toContainText('No chats match');

    await input.fill('pelicans');
    await results.first().click();
    await expect(page).toHaveURL(new RegExp(`/chat/${threadIdOf(first)}$`));
  });
});
