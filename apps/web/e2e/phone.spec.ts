import { expect, type Locator, type Page } from '@playwright/test';
import { test } from './fixtures';

/**
 * A chat on a phone (390x844, touch): what people do there every day must fit the screen whole,
 * with targets a finger can hit (44 px). The model picked has a long name, as configured models
 * often do (playwright.config.ts): the composer's actions must fit beside it anyway.
 */
const PHONE = { width: 390, height: 844 };
const TARGET = 44;

test.use({ viewport: PHONE, isMobile: true, hasTouch: true });

/** The control is wholly on the screen and at least a finger's size each way. */
async function expectOnScreenAndTappable(control: Locator, page: Page): Promise<void> {
  await expect(control).toBeVisible();
  const box = await control.boundingBox();
  if (!box) throw new Error('the control has no box');
  const screen = page.viewportSize() ?? PHONE;
  const where = `${Math.round(box.x)},${Math.round(box.y)} ${Math.round(box.width)}x${Math.round(box.height)}`;
  expect(box.x, `left edge on screen (${where})`).toBeGreaterThanOrEqual(0);
  expect(box.y, `top edge on screen (${where})`).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width, `right edge on screen (${where})`).toBeLessThanOrEqual(screen.width);
  expect(box.y + box.height, `bottom edge on screen (${where})`).toBeLessThanOrEqual(screen.height);
  expect(box.width, `wide enough to tap (${where})`).toBeGreaterThanOrEqual(TARGET - 0.5);
  expect(box.height, `tall enough to tap (${where})`).toBeGreaterThanOrEqual(TARGET - 0.5);
}

test.describe('on a phone', () => {
  test('while a reply streams, Queue and Steer are both on the screen, a finger wide, and each does its job', async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:3]] hello');
    await chat.waitForIdle();
    const picker = page.getByTestId('model-picker');
    await picker.tap();
    await page.getByRole('option', { name: 'Built-in with a long name (8k window)' }).tap();
    await expect(picker).toContainText('Built-in');

    // A reply of several steps, far apart: a steer waits in the Dock until the next one.
    await chat.send('plan a trip [[steps:4]] [[delay:4000]] [[words:8]]');
    await expect(chat.stopButton).toBeVisible();
    await chat.composerInput.fill('also book a hotel');
    const queue = chat.composer.getByRole('button', { name: 'Queue message' });
    const steer = chat.composer.getByRole('button', { name: 'Steer' });
    for (const control of [queue, steer, chat.stopButton]) await expectOnScreenAndTappable(control, page);
    // Nothing of the composer spills past the screen's edge either.
    const spill = await chat.composer.evaluate((element) => element.scrollWidth - element.clientWidth);
    expect(spill, 'the composer scrolls sideways').toBeLessThanOrEqual(0);

    // Queue: the message waits in the Dock for the reply to end.
    await queue.tap();
    await expect(chat.composerInput).toHaveValue('');
    await dock.expectTexts(['also book a hotel']);

    // Steer: the message joins the running reply at its next step.
    await chat.composerInput.fill('and a car');
    await expectOnScreenAndTappable(steer, page);
    await expectOnScreenAndTappable(queue, page);
    await steer.tap();
    await expect(chat.composerInput).toHaveValue('');
    await expect(chat.userMessages.filter({ hasText: 'and a car' })).toHaveCount(1, { timeout: 30_000 });
    // The queued one still waits for its turn.
    await dock.expectTexts(['also book a hotel']);
  });

  test('the paused Dock shows its words and its controls whole, and Resume runs the head', async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:2000]] [[delay:30]] a long reply');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('[[words:3]] first queued');
    await chat.send('[[words:3]] second queued');
    await dock.expectTexts(['[[words:3]] first queued', '[[words:3]] second queued']);
    await chat.stopButton.tap();
    await chat.waitForIdle();

    const status = dock.root.getByTestId('queue-status');
    const resume = dock.root.getByRole('button', { name: 'Resume the queue' });
    await expect(status).toHaveText('paused: nothing runs until you resume');
    await expect(resume).toHaveText('Resume');
    for (const words of [status, resume, dock.counter])
      expect(await isCut(words), `${await words.textContent()} is cut`).toBe(false);
    await expect(status).toBeInViewport({ ratio: 1 });
    const dockBox = await dock.root.boundingBox();
    for (const control of [resume, dock.root.getByRole('button', { name: 'Clear the queue' })]) {
      await expectOnScreenAndTappable(control, page);
      // Inside the Dock's own edges too (it clips what passes them).
      const box = await control.boundingBox();
      expect(box && dockBox && box.x + box.width <= dockBox.x + dockBox.width, 'inside the Dock').toBe(true);
    }

    await resume.tap();
    await expect(status).toBeHidden();
    await expect(chat.userMessages.filter({ hasText: 'first queued' })).toHaveCount(1, { timeout: 30_000 });
  });

  test("the header's buttons are a finger wide and a long title ends in an ellipsis", async ({
    chat,
    page,
  }) => {
    await chat.startThread(
      '[[words:3]] Planning a very long weekend trip to the mountains with friends and family',
    );
    await chat.waitForIdle();

    const title = chat.headerTitle;
    await expect(title).toContainText('Planning a very long');
    const ending = await title.evaluate((element) => ({
      cut: element.scrollWidth > element.clientWidth,
      ellipsis:
        getComputedStyle(element).textOverflow === 'ellipsis' && getComputedStyle(element).display !== 'flex',
    }));
    expect(ending, 'the title is cut with an ellipsis').toEqual({ cut: true, ellipsis: true });

    for (const name of ['Open sidebar', 'Notes', 'Share', 'Chat menu'])
      await expectOnScreenAndTappable(page.getByRole('button', { name, exact: true }), page);

    // The sidebar's drawer: every button and chat in it is a finger tall, its close button wide too.
    await page.getByRole('button', { name: 'Open sidebar', exact: true }).tap();
    const drawer = page.getByRole('dialog');
    await expect(drawer.getByTestId('thread-item')).toHaveCount(1);
    // Once it has slid in.
    const close = drawer.getByRole('button', { name: 'Close sidebar', exact: true });
    await expect(close).toBeInViewport({ ratio: 1 });
    const short = await drawer.locator('button, a').evaluateAll(
      (controls, target) =>
        controls.flatMap((control) => {
          const box = control.getBoundingClientRect();
          if (box.width === 0 && box.height === 0) return [];
          return box.height < target - 0.5
            ? [`${control.getAttribute('aria-label') ?? control.textContent?.trim()}: ${box.height}`]
            : [];
        }),
      TARGET,
    );
    expect(short, 'controls in the drawer shorter than a finger').toEqual([]);
    await expectOnScreenAndTappable(close, page);
  });

  test("a reply's buttons share one row, its time stays whole and its token counts show", async ({
    chat,
  }) => {
    await chat.startThread('[[words:3]] first');
    await chat.waitForIdle();
    await chat.send('[[words:12]] second');
    await chat.waitForIdle();

    const reply = chat.lastReply();
    const rowOf = async (name: string) =>
      Math.round((await reply.getByRole('button', { name, exact: true }).boundingBox())?.y ?? -1);
    const copyRow = await rowOf('Copy reply');
    for (const name of ['Regenerate reply', 'New chat from here', 'Good reply', 'Bad reply'])
      expect(await rowOf(name), `${name} in the row of Copy`).toBe(copyRow);

    const time = reply.getByTestId('message-time');
    await expect(time).toBeVisible();
    const lines = await time.evaluate((element) => {
      const range = document.createRange();
      range.selectNodeContents(element);
      return new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size;
    });
    expect(lines, 'the time on one line').toBe(1);
    await expect(reply.getByTestId('message-usage')).toBeVisible();
    await expect(reply.getByTestId('message-usage')).toHaveText(/· [\d,]+ in \/ [\d,]+ out tokens/);
    await expect(reply.getByTestId('message-usage')).toBeInViewport({ ratio: 1 });
    // A line of its own, which no separator starts (the rendered text: the separator is hidden).
    await expect(reply.getByTestId('message-usage')).toHaveText(/^[\d,]+ in/, { useInnerText: true });
  });

  test('only the latest exchange shows its actions; an earlier message shows its own on a tap, or when the keyboard reaches them', async ({
    chat,
  }) => {
    await chat.startThread('[[words:3]] first');
    await chat.waitForIdle();
    await chat.send('[[words:3]] second');
    await chat.waitForIdle();

    const copyOf = (reply: Locator) => reply.getByRole('button', { name: 'Copy reply', exact: true });
    const editOf = (message: Locator) => message.getByRole('button', { name: 'Edit message', exact: true });
    const [earlierReply, latestReply] = [chat.assistantMessages.first(), chat.assistantMessages.last()];
    const [earlierMessage, latestMessage] = [chat.userMessages.first(), chat.userMessages.last()];
    expect(await isTappable(copyOf(latestReply))).toBe(true);
    expect(await isTappable(editOf(latestMessage))).toBe(true);
    expect(await isTappable(copyOf(earlierReply))).toBe(false);
    expect(await isTappable(editOf(earlierMessage))).toBe(false);
    // Out of sight, not out of reach: a screen reader still finds them in place.
    await expect(copyOf(earlierReply)).toHaveCount(1);

    // A tap on the message shows its row; another tap hides it again.
    await earlierReply.getByText('You said').first().tap();
    await expect.poll(() => isTappable(copyOf(earlierReply))).toBe(true);
    await earlierReply.getByText('You said').first().tap();
    await expect.poll(() => isTappable(copyOf(earlierReply))).toBe(false);

    // The keyboard reaches them: the row shows while focus is in it.
    await editOf(earlierMessage).focus();
    await expect.poll(() => isTappable(editOf(earlierMessage))).toBe(true);
  });

  test("a deleted item's Undo shows just above the message box, a finger wide; the Keep-going switch takes a finger", async ({
    chat,
    dock,
    page,
  }) => {
    await chat.startThread('[[words:2000]] [[delay:30]] a long reply');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('[[words:3]] first queued');
    await chat.send('[[words:3]] second queued');
    await dock.expectTexts(['[[words:3]] first queued', '[[words:3]] second queued']);

    // The switch keeps its look; a finger anywhere within 44 px of its middle still turns it.
    const toggle = dock.root.getByRole('switch', { name: 'Keep going when I leave' });
    const box = await toggle.boundingBox();
    if (!box) throw new Error('the switch has no box');
    const reach = TARGET / 2 - 1;
    const middle = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    const offsets: [number, number][] = [
      [0, -reach],
      [0, reach],
      [-reach, 0],
      [reach, 0],
    ];
    for (const [dx, dy] of offsets) {
      const hit = await page.evaluate(
        ({ x, y }) => !!document.elementFromPoint(x, y)?.closest('[role="switch"]'),
        { x: middle.x + dx, y: middle.y + dy },
      );
      expect(hit, `a tap ${dx},${dy} px from the switch's middle reaches it`).toBe(true);
    }

    await dock.delete(0);
    const undo = page.getByRole('button', { name: 'Undo', exact: true });
    await expectOnScreenAndTappable(undo, page);
    const toast = page.locator('li[data-state="open"]', { has: undo });
    // Measured once the toast has slid into place (it enters from below, over the box).
    const gapAbove = async () => {
      const toastBox = await toast.boundingBox();
      const composerBox = await chat.composer.boundingBox();
      if (!toastBox || !composerBox) throw new Error('no box');
      return composerBox.y - (toastBox.y + toastBox.height);
    };
    await expect
      .poll(gapAbove, { message: 'the toast ends just above the message box, covering none of it' })
      .toBeGreaterThanOrEqual(0);
    expect(await gapAbove(), 'the toast ends just above the message box').toBeLessThanOrEqual(24);

    await undo.tap();
    await dock.expectTexts(['[[words:3]] first queued', '[[words:3]] second queued']);
    await chat.stopButton.tap();
  });
});

/** A finger on the control's middle reaches it: on the screen and not hidden or clipped away. */
async function isTappable(control: Locator): Promise<boolean> {
  return await control.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    return box.width > 0 && !!hit && element.contains(hit);
  });
}

/** Text cut by its box (an ellipsis, or hidden past its edge), itself or any element inside. */
async function isCut(locator: Locator): Promise<boolean> {
  return await locator.evaluate((element) =>
    [element, ...Array.from(element.querySelectorAll('*'))].some(
      (part) => part.scrollWidth > part.clientWidth + 1 && getComputedStyle(part).overflow !== 'visible',
    ),
  );
}
