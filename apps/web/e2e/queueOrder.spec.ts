import type { BrowserContext } from '@playwright/test';
import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';
import { threadIdOf } from './pages/Sidebar';

const words = (texts: string[]) => texts.map((text) => `${text} [[words:6]]`);

test.describe('reordering and merging the queue (Q9, Q13, Q14)', () => {
  // Tall enough for four items without scrolling the Dock's list: a drag starts on a visible grip.
  test.use({ viewport: { width: 1440, height: 900 } });

  /**
   * A thread with a long reply running (5 minutes: every test stops it, and on a slow machine a
   * test's steps take minutes) and four short messages queued behind it.
   */
  async function fourQueued(chat: ChatPage, dock: QueueDock): Promise<string> {
    const url = await chat.startThread('[[words:3000]] [[delay:100]] a long reply');
    for (const text of ['one', 'two', 'three', 'four']) await chat.send(`${text} [[words:6]]`);
    await dock.expectTexts(words(['one', 'two', 'three', 'four']));
    return url;
  }

  /** The same thread in a second tab; `both` waits until both Docks show `texts`. */
  async function secondTab(context: BrowserContext, url: string, dock: QueueDock) {
    const otherPage = await context.newPage();
    const other = new ChatPage(otherPage);
    const otherDock = new QueueDock(otherPage);
    await otherPage.goto(url);
    await other.waitUntilReady();
    const both = async (texts: string[]) => {
      await dock.expectTexts(words(texts));
      await otherDock.expectTexts(words(texts));
    };
    return { other, otherDock, both };
  }

  test('drag and Alt+Up/Down reorder the queue; the other tab follows; Esc closes a menu and nothing else', async ({
    chat,
    dock,
    page,
    context,
  }) => {
    const url = await fourQueued(chat, dock);
    const { both } = await secondTab(context, url, dock);

    // Esc closes an item's menu and nothing else: the reply goes on, the queue is not paused.
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
    await chat.stopButton.click();
  });

  test('Run next and a merge, each undone from its toast; the other tab follows', async ({
    chat,
    dock,
    page,
    context,
  }) => {
    // Two tabs, four commands and their Undos, each checked in both tabs: past 2 min on a slow host.
    test.setTimeout(180_000);
    const url = await fourQueued(chat, dock);
    const { otherDock, both } = await secondTab(context, url, dock);

    const undo = page.getByRole('button', { name: 'Undo', exact: true });
    await dock.choose(2, 'Run next');
    await expect(page.getByText('Runs next', { exact: true })).toBeVisible();
    // The pointer rests on the toast, which keeps it open while the other tab is checked.
    await undo.hover();
    await both(['three', 'one', 'two', 'four']);
    await undo.click();
    await both(['one', 'two', 'three', 'four']);

    // Two items that are not side by side become one message at the place of the first.
    await dock.merge([1, 3]);
    // The pointer rests on the toast first: the toast closes by itself after a few seconds.
    await undo.hover();
    const merged = ['one [[words:6]]', 'two [[words:6]]\n\nfour [[words:6]]', 'three [[words:6]]'];
    await dock.expectTexts(merged);
    await otherDock.expectTexts(merged);
    // Undo splits them again, each at its place.
    await undo.click();
    await both(['one', 'two', 'three', 'four']);
    await chat.stopButton.click();
  });

  test('an Undo of a merge that cannot reach the server loses no text, and its Retry finishes it', async ({
    chat,
    dock,
    page,
  }) => {
    const url = await fourQueued(chat, dock);
    await dock.merge([0, 2]);
    const merged = ['one [[words:6]]\n\nthree [[words:6]]', 'two [[words:6]]', 'four [[words:6]]'];
    await dock.expectTexts(merged);

    // The network drops the message the Undo sends again: the merged message keeps every text.
    const sendPath = `**/api/threads/${threadIdOf(url)}/turns`;
    await page.route(sendPath, (route) => route.abort('internetdisconnected'));
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect(chat.errorBanner).toBeVisible();
    await page.unroute(sendPath);
    await dock.expectTexts(merged);

    // Retry goes on with the Undo: each message back at its place, none twice.
    await chat.errorBanner.getByRole('button', { name: 'Retry' }).click();
    await dock.expectTexts(words(['one', 'two', 'three', 'four']));
    await chat.stopButton.click();
  });

  test('Stop & send this runs an item now with the handoff; the rest run after it in their order', async ({
    chat,
    dock,
    context,
  }) => {
    const url = await fourQueued(chat, dock);
    const { otherDock } = await secondTab(context, url, dock);
    await dock.choose(2, 'Stop & send this');
    await expect(chat.repliesTo('three')).toContainText('(after interruption) You said: "three"');
    // Three more replies run one after another before the Docks are empty.
    await dock.expectTexts([], 30_000);
    await otherDock.expectTexts([], 30_000);
    await chat.waitForIdle();
    // What the server holds, read again: the replies in the order they ran.
    await chat.reload();
    await expect(chat.assistantMessages).toHaveCount(5);
    const replies = await chat.assistantMessages.allInnerTexts();
    expect(replies.map((reply) => /You said: "(\w+)/.exec(reply)?.[1])).toEqual([
      'a',
      'three',
      'one',
      'two',
      'four',
    ]);
  });

  test('a failed head keeps the front: nothing is offered or dropped ahead of it', async ({ chat, dock }) => {
    await chat.startThread('[[words:3000]] [[delay:100]] runs');
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
    // Dragging above the failed head leaves it first: the item stops just below it.
    await dock.drag(2, 0, 1);
    await dock.expectTexts(['breaks [[fail]]', 'first [[words:3]]', 'second [[words:3]]']);
  });
});
