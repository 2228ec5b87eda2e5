import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { Sidebar, threadIdOf } from './pages/Sidebar';

test.describe('threads in the sidebar', () => {
  test('a chat can be renamed and deleted from its menu', async ({ chat, sidebar, page }) => {
    const firstId = threadIdOf(await chat.startThread('first chat [[words:4]]'));
    await chat.waitForIdle();
    const secondId = threadIdOf(await chat.startThread('second chat [[words:4]]'));
    await chat.waitForIdle();
    // The API titles a thread from its first message.
    await expect(sidebar.link(firstId)).toHaveText('first chat');
    await expect(sidebar.link(secondId)).toHaveText('second chat');
    await expect(chat.headerTitle).toHaveText('second chat');

    // Escape cancels; an empty title is not saved (Enter does nothing, the field stays).
    let input = await sidebar.startRenaming(secondId);
    await expect(input).toHaveValue('second chat');
    await input.fill('never saved');
    await input.press('Escape');
    await expect(sidebar.renameInput).toBeHidden();
    await expect(sidebar.link(secondId)).toHaveText('second chat');
    input = await sidebar.startRenaming(secondId);
    await input.fill('   ');
    await input.press('Enter');
    await expect(input).toBeFocused();
    // The red border comes with words, tied to the field.
    await expect(sidebar.item(secondId).getByTestId('rename-error')).toHaveText('A title cannot be empty.');
    await expect(input).toHaveAttribute('aria-invalid', 'true');
    await input.press('Escape');
    await expect(sidebar.link(secondId)).toHaveText('second chat');

    await sidebar.rename(secondId, '  Renamed chat  ');
    await expect(sidebar.link(secondId)).toHaveText('Renamed chat');
    await expect(chat.headerTitle).toHaveText('Renamed chat');

    // The title is the server's: a reload shows it in the sidebar and the header.
    await chat.reload();
    await expect(sidebar.link(secondId)).toHaveText('Renamed chat');
    await expect(chat.headerTitle).toHaveText('Renamed chat');
    await expect(page).toHaveTitle('Renamed chat');

    // Deleting the open chat goes to the start page; the other chat stays.
    await sidebar.delete(secondId);
    await expect(page).toHaveURL('/');
    await expect(sidebar.item(secondId)).toHaveCount(0);
    await expect(sidebar.link(firstId)).toHaveText('first chat');
    // This tab deleted it: no "deleted elsewhere" notice.
    await expect(chat.deletedElsewhereNotice).toHaveCount(0);

    await chat.reload();
    await expect(sidebar.item(secondId)).toHaveCount(0);
    await expect(sidebar.link(firstId)).toBeVisible();
    await page.goto(`/chat/${secondId}`);
    await expect(page.getByText('This chat does not exist.')).toBeVisible();
  });

  test('the delete dialog can be cancelled', async ({ chat, sidebar }) => {
    const id = threadIdOf(await chat.startThread('keep me [[words:4]]'));
    await chat.waitForIdle();
    await sidebar.openActions(id);
    await sidebar.menu().getByRole('menuitem', { name: 'Delete' }).click();
    await expect(sidebar.deleteDialog()).toContainText('Its messages, queue and versions are removed.');
    await sidebar.deleteDialog().getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect(sidebar.deleteDialog()).toBeHidden();
    await chat.reload();
    await expect(sidebar.link(id)).toHaveText('keep me');
    await expect(chat.userMessages).toHaveCount(1);
  });

  test('a refused rename or delete says why and changes nothing', async ({ chat, sidebar, page }) => {
    const id = threadIdOf(await chat.startThread('stays as it is [[words:4]]'));
    await chat.waitForIdle();
    await page.route(`**/api/threads/${id}`, async (route) => {
      const method = route.request().method();
      if (method !== 'PATCH' && method !== 'DELETE') return route.fallback();
      await route.fulfill({
        status: 500,
        json: { error: { code: 'internal', message: `${method} refused by the test` } },
      });
    });

    await sidebar.rename(id, 'Not saved');
    await expect(page.getByText('Could not rename the chat', { exact: true })).toBeVisible();
    await expect(page.getByText('PATCH refused by the test', { exact: true })).toBeVisible();
    await expect(sidebar.link(id)).toHaveText('stays as it is');
    await expect(chat.headerTitle).toHaveText('stays as it is');

    await sidebar.delete(id);
    await expect(page.getByText('Could not delete the chat', { exact: true })).toBeVisible();
    await expect(sidebar.link(id)).toBeVisible();
    await expect(page).toHaveURL(new RegExp(`/chat/${id}$`));
  });

  test('another tab of the chat follows a rename and says when the chat was deleted', async ({
    chat,
    sidebar,
    context,
  }) => {
    const url = await chat.startThread('shared chat [[words:4]]');
    const id = threadIdOf(url);
    await chat.waitForIdle();

    const otherPage = await context.newPage();
    const other = new ChatPage(otherPage);
    await otherPage.goto(url);
    await other.waitUntilReady();
    await expect(other.headerTitle).toHaveText('shared chat');

    await sidebar.rename(id, 'Shared, renamed');
    await expect(other.headerTitle).toHaveText('Shared, renamed');
    await expect(new Sidebar(otherPage).link(id)).toHaveText('Shared, renamed');

    await sidebar.delete(id);
    await expect(chat.page).toHaveURL('/');
    await expect(otherPage).toHaveURL('/');
    await expect(other.deletedElsewhereNotice).toBeVisible();
    await expect(new Sidebar(otherPage).item(id)).toHaveCount(0);
  });
});

test.describe('a long thread list', () => {
  test('the sidebar shows the first page and loads the next as it scrolls', async ({
    page,
    chat,
    sidebar,
    baseURL,
  }) => {
    // The guest is signed in once the start page is ready.
    await chat.openStartPage();
    // 60 chats through the API, as this guest (the page's cookies), oldest first.
    const ids: string[] = [];
    for (let index = 0; index < 60; index++) {
      const response = await page.request.post('/api/threads', {
        headers: { origin: baseURL as string },
        data: { title: `Chat number ${index}` },
      });
      expect(response.status()).toBe(201);
      ids.push(((await response.json()) as { id: string }).id);
    }
    await page.reload();
    const newest = ids.at(-1) as string;
    const oldest = ids[0] as string;
    await expect(sidebar.link(newest)).toHaveText('Chat number 59');
    // The first page holds 50: the oldest ten are not there until the list scrolls to its end.
    await expect(sidebar.items).toHaveCount(50);
    await expect(sidebar.item(oldest)).toHaveCount(0);
    await page.getByTestId('more-threads').scrollIntoViewIfNeeded();
    await expect(sidebar.items).toHaveCount(60);
    await expect(sidebar.link(oldest)).toHaveText('Chat number 0');
    await expect(page.getByTestId('more-threads')).toHaveCount(0);
  });
});
