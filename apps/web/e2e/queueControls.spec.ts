import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';

test.describe('queue controls', () => {
  test('while a reply streams the send button is Stop; typing turns it into Queue', async ({
    chat,
    page,
  }) => {
    await chat.startThread('[[words:300]] [[delay:30]] streaming');
    const composer = chat.composer;
    await expect(composer.getByRole('button', { name: 'Stop', exact: true })).toBeVisible();
    await expect(composer.getByRole('button', { name: 'Queue message' })).toBeHidden();
    await chat.composerInput.fill('next');
    await expect(composer.getByRole('button', { name: 'Queue message' })).toBeEnabled();
    await expect(composer.getByRole('button', { name: 'Stop', exact: true })).toBeVisible();
    await chat.composerInput.fill('');
    await composer.getByRole('button', { name: 'Stop', exact: true }).click();
    await chat.waitForIdle();
    await expect(composer.getByRole('button', { name: 'Send' })).toBeDisabled();
    await expect(page.getByTestId('send')).toBeVisible();
  });

  test('pause holds the queue in every tab, resume runs the head, clear empties it', async ({
    chat,
    dock,
    context,
  }) => {
    const url = await chat.startThread('[[words:3000]] [[delay:30]] long');
    await chat.send('[[words:12]] first queued');
    await chat.send('[[words:12]] second queued');
    await dock.expectTexts(['[[words:12]] first queued', '[[words:12]] second queued']);

    const otherPage = await context.newPage();
    const other = new ChatPage(otherPage);
    const otherDock = new QueueDock(otherPage);
    await otherPage.goto(url);
    await other.waitUntilReady();

    await dock.root.getByRole('button', { name: 'Pause the queue' }).click();
    await expect(dock.root.getByTestId('queue-status')).toContainText('paused');
    await expect(otherDock.root.getByTestId('queue-status')).toContainText('paused');

    // The reply ends: nothing is claimed while paused, in either tab.
    await chat.stopButton.click();
    await chat.waitForIdle();
    await otherPage.waitForTimeout(1500);
    await dock.expectTexts(['[[words:12]] first queued', '[[words:12]] second queued']);
    await expect(chat.userMessages).toHaveCount(1);

    // Resume (from the other tab): the head runs.
    await otherDock.root.getByRole('button', { name: 'Resume the queue' }).click();
    await expect(chat.repliesTo('first queued')).toHaveCount(1);
    await expect(chat.repliesTo('second queued')).toHaveCount(1, { timeout: 20_000 });
  });

  test('clear empties the queue after a confirmation, in every tab', async ({ chat, dock, context }) => {
    const url = await chat.startThread('[[words:3000]] [[delay:30]] another long');
    const otherPage = await context.newPage();
    const otherDock = new QueueDock(otherPage);
    await otherPage.goto(url);
    await new ChatPage(otherPage).waitUntilReady();
    await chat.send('x');
    await chat.send('y');
    await dock.expectTexts(['x', 'y']);
    await dock.root.getByRole('button', { name: 'Clear the queue' }).click();
    await chat.page
      .getByRole('dialog', { name: 'Clear the queue?' })
      .getByRole('button', { name: 'Clear' })
      .click();
    await dock.expectTexts([]);
    await expect(otherDock.root).toBeHidden();
    await chat.stopButton.click();
  });
});
