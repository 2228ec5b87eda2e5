import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';

test.describe('reordering and merging the queue (Q9, Q13, Q14)', () => {
  // Tall enough for four items without scrolling the Dock's list: a drag starts on a visible grip.
  test.use({ viewport: { width: 1440, height: 900 } });

  test('drag, Alt+Up/Down, Run next, merge and Stop & send this; the other tab follows every step', async ({
    chat,
    dock,
    page,
    context,
  }) => {
    const url = await chat.startThread('[[words:3000]] [[delay:30]] a long reply');
    for (const text of ['one', 'two', 'three', 'four']) await chat.send(`${text} [[words:6]]`);
    const words = (texts: string[]) => texts.map((text) => `${text} [[words:6]]`);
    await dock.expectTexts(words(['one', 'two', 'three', 'four']));

    const otherPage = await context.newPage();
    const other = new ChatPage(otherPage);
    const otherDock = new QueueDock(otherPage);
    await otherPage.goto(url);
    await other.waitUntilReady();
    const both = async (texts: string[]) => {
      await dock.expectTexts(words(texts));
      await otherDock.expectTexts(words(texts));
    };

    // Esc closes an item's menu and nothing else: the reply goes on.
    await dock.menuButton(1).click();
    await expect(page.getByRole('menuitem', { name: 'Run next' })).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(page.getByRole('menuitem', { name: 'Run next' })).toBeHidden();
    await expect(chat.stopButton).toBeVisible();
    await expect(dock.root.getByTestId('queue-status')).toBeHidden();

    // Drag the last item to the top.
    await dock.drag(3, 0);
    await both(['four', 'one', 'two', 'three']);
    await expect(page.getByText('Message moved', { exact: true })).toBeVisible();

    // Alt+Down from the keyboard: the item moves, the keyboard stays with it, and it is announced.
    await dock.menuButton(1).focus();
    await page.keyboard.press('Alt+ArrowDown');
    await both(['four', 'two', 'one', 'three']);
    await expect(dock.menuButton(2)).toBeFocused();
    await expect(
      page.locator('[aria-live="polite"]', { hasText: 'Moved to position 3 of 4.' }),
    ).toBeAttached();
    await page.keyboard.press('Alt+ArrowUp');
    await both(['four', 'one', 'two', 'three']);
    await expect(dock.menuButton(1)).toBeFocused();

    // Run next from the menu, then Undo from the toast: back where it was.
    await dock.choose(3, 'Run next');
    await both(['three', 'four', 'one', 'two']);
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await both(['four', 'one', 'two', 'three']);

    // Merge two items that are not side by side: one message at the place of the first.
    await dock.merge([1, 3]);
    await dock.expectTexts([...words(['four']), 'one [[words:6]]\n\nthree [[words:6]]', ...words(['two'])]);
    await otherDock.expectTexts([
      ...words(['four']),
      'one [[words:6]]\n\nthree [[words:6]]',
      ...words(['two']),
    ]);
    // Undo splits them again, each at its place.
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await both(['four', 'one', 'two', 'three']);

    // Stop & send this on the third item: it runs now, after the cut-off reply, and the rest wait.
    await dock.choose(2, 'Stop & send this');
    await expect(chat.repliesTo('two')).toContainText('(after interruption) You said: "two"');
    // The queue goes on after it in the order it had; both Docks empty.
    await dock.expectTexts([]);
    await otherDock.expectTexts([]);
    await chat.waitForIdle();
    // What the server holds, read again: the replies in the order they ran.
    await chat.reload();
    await expect(chat.assistantMessages).toHaveCount(5);
    const replies = await chat.assistantMessages.allInnerTexts();
    expect(replies.map((reply) => /You said: "(\w+)/.exec(reply)?.[1])).toEqual([
      'a',
      'two',
      'four',
      'one',
      'three',
    ]);
  });

  test('a failed head keeps the front: nothing is offered or dropped ahead of it', async ({ chat, dock }) => {
    await chat.startThread('[[words:3000]] [[delay:30]] runs');
    await chat.send('breaks [[fail]]');
    await chat.send('first [[words:3]]');
    await chat.send('second [[words:3]]');
    // Stop & send on the head: it runs at once and fails, and stays first (Q11).
    await dock.headAction('Stop & send').click();
    await expect(dock.item(0)).toHaveAttribute('data-status', 'failed');
    // The failed head has no grip and no menu; the others can only swap among themselves.
    await expect(dock.item(0).getByTestId('queue-item-grip')).toHaveCount(0);
    await expect(dock.menuButton(0)).toHaveCount(0);
    await dock.menuButton(2).click();
    await expect(dock.page.getByRole('menuitem', { name: 'Run next' })).toBeVisible();
    await expect(dock.page.getByRole('menuitem', { name: 'Move down' })).toHaveCount(0);
    await dock.page.getByRole('menuitem', { name: 'Run next' }).click();
    await dock.expectTexts(['breaks [[fail]]', 'second [[words:3]]', 'first [[words:3]]']);
    // Dragging above the failed head leaves it first.
    await dock.drag(2, 0);
    await dock.expectTexts(['breaks [[fail]]', 'first [[words:3]]', 'second [[words:3]]']);
  });
});
