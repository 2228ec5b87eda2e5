import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';
import { realPng } from './support/images';

test.describe('queue controls', () => {
  test('while a reply streams the send button is Stop; typing turns it into Queue', async ({
    chat,
    page,
  }) => {
    await chat.startThread('[[words:1000]] [[delay:30]] streaming');
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
    await expect(chat.repliesTo('first queued')).toHaveCount(1, { timeout: 30_000 });
    await expect(chat.repliesTo('second queued')).toHaveCount(1, { timeout: 30_000 });
  });

  test('deleting the last item of a paused queue ends the pause: the next message runs at once, and Undo brings the item back paused (S3)', async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:3000]] [[delay:30]] a long one');
    await chat.send('waits [[words:3]]');
    await dock.expectTexts(['waits [[words:3]]']);
    await chat.stopButton.click();
    await chat.waitForIdle();
    await expect(dock.root.getByTestId('queue-status')).toContainText('paused');

    // Its last item deleted, the queue holds nothing: no "paused 0 / 5", a send runs.
    await dock.delete(0);
    await expect(dock.root).toBeHidden();
    await expect(chat.composerHint).toHaveText('Enter sends · Shift+Enter for a new line');

    // Undo brings it back to wait in the paused queue, not to run.
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await dock.expectTexts(['waits [[words:3]]']);
    await expect(dock.root.getByTestId('queue-status')).toContainText('paused');
    await expect(chat.userMessages).toHaveCount(1);

    await dock.delete(0);
    await expect(dock.root).toBeHidden();
    await chat.send('runs at once [[words:30]]');
    await expect(chat.repliesTo('runs at once')).toHaveCount(1);
    await chat.waitForIdle();
    await expect(dock.root).toBeHidden();
    await expect(chat.userMessages.filter({ hasText: 'waits' })).toHaveCount(0);
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

  test('a paused queue says so on every item and in the composer, even while a reply still runs', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('[[words:3000]] [[delay:30]] still talking');
    await chat.send('one');
    await chat.send('two');
    await dock.expectTexts(['one', 'two']);
    await expect(dock.when(1)).toHaveText('Runs after the current reply and 1 more.');

    await dock.root.getByRole('button', { name: 'Pause the queue' }).click();
    await expect(dock.root.getByTestId('queue-status')).toContainText('paused');
    // Nothing says it runs after the reply: it does not, until the queue is resumed.
    await expect(dock.headStatus()).toHaveText('Paused: resume the queue to run it.');
    await expect(dock.when(1)).toHaveText('Paused: after 1 more once resumed.');
    await expect(chat.composerHint).toHaveText(
      'Enter adds to the paused queue · Ctrl+Enter steers the current reply · Shift+Enter for a new line',
    );
    await chat.stopButton.click();
    await chat.waitForIdle();
    await expect(chat.composerHint).toHaveText('Enter adds to the paused queue · Shift+Enter for a new line');
    await expect(chat.composerInput).toHaveAttribute('placeholder', 'Add a message to the paused queue…');
  });

  test('deleting from the keyboard keeps the keyboard in the Dock, and Undo brings the message back to its place with its image', async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:3000]] [[delay:30]] keep going');
    await expect(chat.stopButton).toBeVisible();
    await chat.composer.getByTestId('attach-input').setInputFiles({
      name: 'picture.png',
      mimeType: 'image/png',
      buffer: realPng(32, 24),
    });
    await expect(chat.composer.getByTestId('attachment-thumb')).toHaveAttribute('data-state', 'ready');
    await chat.send('with a picture');
    await chat.send('two');
    await chat.send('three');
    await dock.expectTexts(['with a picture', 'two', 'three']);

    // From the keyboard: the next item takes the deleted one's place, and the keyboard with it.
    await dock.item(0).getByRole('button', { name: 'Delete', exact: true }).focus();
    await page.keyboard.press('Enter');
    await dock.expectTexts(['two', 'three']);
    await expect(dock.item(0).getByRole('button', { name: 'Delete', exact: true })).toBeFocused();

    // Undo brings it back, image included, to the place it had (Q13).
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await dock.expectTexts(['with a picture', 'two', 'three']);
    await expect(dock.item(0).getByTestId('queue-item-attachments').locator('img')).toHaveCount(1);

    // The last item deleted from the keyboard: the composer takes the keyboard.
    await dock.item(2).getByRole('button', { name: 'Delete', exact: true }).focus();
    await page.keyboard.press('Enter');
    await dock.expectTexts(['with a picture', 'two']);
    await expect(chat.composerInput).toBeFocused();
    await chat.stopButton.click();
  });

  test('after Stop the transcript ends at its latest message above the Dock; the way back down never covers text', async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:3000]] [[delay:15]] a long story');
    await expect(chat.lastReply()).toContainText('You said: "a long story"');
    await chat.send('first queued');
    await chat.send('second queued, long enough to take two lines on a narrow screen');
    await dock.expectTexts([
      'first queued',
      'second queued, long enough to take two lines on a narrow screen',
    ]);
    await dock.root.getByRole('button', { name: 'Pause the queue' }).click();
    await expect.poll(async () => (await chat.replyText(chat.lastReply())).length).toBeGreaterThan(1500);
    await chat.stopButton.click();

    // The Interrupted badge shows whole, above the Dock (not under it).
    const badge = chat.interruptedBadge(chat.lastReply());
    await expect(badge).toBeVisible();
    await expect
      .poll(async () => {
        const [mark, queue] = await Promise.all([badge.boundingBox(), dock.root.boundingBox()]);
        return mark && queue ? queue.y - (mark.y + mark.height) : -1;
      })
      .toBeGreaterThanOrEqual(0);
    await expect(page.getByTestId('scroll-to-latest')).toBeHidden();

    // Scrolled up, the way back to the latest message sits below the transcript, over no text.
    await chat.lastReply().hover();
    await page.mouse.wheel(0, -600);
    const back = page.getByTestId('scroll-to-latest');
    await expect(back).toBeVisible();
    const paneBottom = await chat.transcript.evaluate((element) => {
      let pane: HTMLElement | null = element.parentElement;
      while (pane && !/auto|scroll/.test(getComputedStyle(pane).overflowY)) pane = pane.parentElement;
      return (pane ?? document.documentElement).getBoundingClientRect().bottom;
    });
    expect((await back.boundingBox())?.y).toBeGreaterThanOrEqual(paneBottom);
    await back.click();
    await expect(badge).toBeInViewport({ ratio: 1 });
    await expect(back).toBeHidden();
  });
});
