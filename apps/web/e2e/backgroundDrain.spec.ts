import type { ThreadDetail } from '@chat/contracts';
import type { BrowserContext, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import type { QueueDock } from './pages/QueueDock';

/**
 * Q15, "Keep going when I leave": the Dock's switch, the queue running on the server with no page
 * open, and hearing about it (notification permission asked on the switch only, a hidden tab's
 * title count and notifications, the "While you were away" divider).
 */

/** A reply long enough to queue behind and to leave while it runs, on a slow machine too (about 12 s). */
const LONG = '[[words:400]] [[delay:30]]';

/**
 * Lets the test hide and show the page (`window.__setHidden`), as switching tabs does; headless
 * Chromium keeps every page visible. Records what the page asks of the Notification API.
 */
async function instrument(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const record = window as unknown as {
      __asked: number;
      __notifications: Array<{ title: string; body: string }>;
      __setHidden: (hidden: boolean) => void;
    };
    record.__asked = 0;
    record.__notifications = [];
    const Real = window.Notification;
    const Recording = function (this: unknown, title: string, options?: NotificationOptions) {
      record.__notifications.push({ title, body: options?.body ?? '' });
      return new Real(title, options);
    } as unknown as typeof Notification;
    Object.defineProperty(Recording, 'permission', { get: () => Real.permission });
    Recording.requestPermission = (...args: Parameters<typeof Notification.requestPermission>) => {
      record.__asked += 1;
      return Real.requestPermission(...args);
    };
    window.Notification = Recording;
    let hidden = false;
    Object.defineProperty(document, 'visibilityState', { get: () => (hidden ? 'hidden' : 'visible') });
    Object.defineProperty(document, 'hidden', { get: () => hidden });
    record.__setHidden = (value: boolean) => {
      hidden = value;
      document.dispatchEvent(new Event('visibilitychange'));
    };
  });
}

const asked = (page: Page) => page.evaluate(() => (window as unknown as { __asked: number }).__asked);
const notifications = (page: Page) =>
  page.evaluate(
    () => (window as unknown as { __notifications: Array<{ title: string; body: string }> }).__notifications,
  );
const setHidden = (page: Page, hidden: boolean) =>
  page.evaluate(
    (value) => (window as unknown as { __setHidden: (h: boolean) => void }).__setHidden(value),
    hidden,
  );

function drainSwitch(dock: QueueDock) {
  return dock.root.getByRole('switch', { name: 'Keep going when I leave' });
}

/** The thread as the API has it, read through the web app's proxy with the page's session. */
async function detailOf(context: BrowserContext, threadId: string): Promise<ThreadDetail> {
  const response = await context.request.get(`/api/threads/${threadId}`);
  expect(response.status()).toBe(200);
  return (await response.json()) as ThreadDetail;
}

test.describe('keep going when I leave (Q15)', () => {
  // Several replies run one after the other on the server: more than the default minute when the
  // machine is loaded.
  test.setTimeout(150_000);

  test('the queue runs with the page closed; coming back shows the replies below "While you were away"', async ({
    context,
    page,
    chat,
    dock,
  }) => {
    // Permission not granted yet: the switch is what asks for it.
    await instrument(context);
    const url = await chat.startThread('first [[words:5]]');
    const threadId = url.split('/').at(-1) ?? '';
    await expect(chat.assistantMessages).toHaveCount(1);
    await chat.waitForIdle();
    // Never asked on page load.
    expect(await asked(page)).toBe(0);

    await chat.send(`second ${LONG}`);
    await expect(chat.stopButton).toBeVisible();
    await chat.send('third');
    await chat.send('fourth');
    await dock.expectTexts(['third', 'fourth']);
    const toggle = drainSwitch(dock);
    await expect(toggle).toHaveAttribute('aria-checked', 'false');
    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-checked', 'true');
    // Turning it on is what asks for notification permission.
    expect(await asked(page)).toBe(1);
    await expect.poll(async () => (await detailOf(context, threadId)).thread.drainMode).toBe('background');

    // Every page of the chat closes while "second" still streams.
    await page.close();
    await expect
      .poll(
        async () => {
          const detail = await detailOf(context, threadId);
          return detail.turnQueue.activeTurn === null && detail.turnQueue.items.length === 0;
        },
        { timeout: 90_000 },
      )
      .toBe(true);

    const back = new ChatPage(await context.newPage());
    await back.page.goto(url);
    await back.waitUntilReady();
    await expect(back.userMessages).toHaveCount(4);
    await expect(back.repliesTo('fourth')).toHaveCount(1);
    // The divider goes above the first reply not seen: the one to "second", still streaming on leaving.
    const divider = back.transcript.getByTestId('away-divider');
    await expect(divider).toHaveCount(1);
    await expect(divider).toContainText('While you were away');
    await expect(back.assistantMessages.nth(1).getByTestId('away-divider')).toHaveCount(1);
  });

  test('a hidden tab counts finished replies in its title, notifies, and shows the divider when it comes back', async ({
    context,
    page,
    chat,
    dock,
  }) => {
    await context.grantPermissions(['notifications']);
    await instrument(context);
    await chat.startThread(`long ${LONG}`);
    await expect(chat.stopButton).toBeVisible();
    await chat.send('short one');
    await dock.expectTexts(['short one']);
    await drainSwitch(dock).click();
    await expect(drainSwitch(dock)).toHaveAttribute('aria-checked', 'true');
    const title = await page.title();
    expect(title).not.toMatch(/^\(\d+\)/);

    await setHidden(page, true);
    await expect(page).toHaveTitle(`(2) ${title}`, { timeout: 60_000 });
    await expect
      .poll(async () => (await notifications(page)).map((shown) => shown.title.split(':')[0]))
      .toEqual(['Reply finished', 'Reply finished', 'Queue finished']);
    const [first] = await notifications(page);
    expect(first?.body).toMatch(/^You said: "long/);

    await setHidden(page, false);
    await expect(page).toHaveTitle(title);
    await expect(chat.assistantMessages.first().getByTestId('away-divider')).toHaveCount(1);
    // Writing again puts it behind.
    await chat.send('I am back');
    await expect(chat.transcript.getByTestId('away-divider')).toHaveCount(0);
  });

  test('the chat menu offers the switch while a reply runs with nothing queued; reopening lands on "While you were away"', async ({
    context,
    page,
    chat,
  }) => {
    await instrument(context);
    const url = await chat.startThread('first [[words:5]]');
    const threadId = url.split('/').at(-1) ?? '';
    await chat.waitForIdle();
    // Two long replies run after the person leaves: everything new is taller than the screen.
    await chat.send(`second ${LONG}`);
    await expect(chat.stopButton).toBeVisible();
    await expect(page.getByTestId('queue-dock')).toBeHidden();
    await page.getByTestId('chat-menu').click();
    const item = page.getByRole('menuitemcheckbox', { name: 'Keep going when I leave' });
    await expect(item).toHaveAttribute('aria-checked', 'false');
    await item.click();
    expect(await asked(page)).toBe(1);
    await expect.poll(async () => (await detailOf(context, threadId)).thread.drainMode).toBe('background');
    await chat.send(`third ${LONG}`);
    await expect(page.getByTestId('queue-dock')).toBeVisible();
    await page.close();
    await expect
      .poll(
        async () => {
          const detail = await detailOf(context, threadId);
          return detail.turnQueue.activeTurn === null && detail.turnQueue.items.length === 0;
        },
        { timeout: 90_000 },
      )
      .toBe(true);

    const back = new ChatPage(await context.newPage());
    await back.page.goto(url);
    await back.waitUntilReady();
    await expect(back.assistantMessages).toHaveCount(3);
    // It opens where the person left off: the divider in view, the latest message a tap away.
    const divider = back.transcript.getByTestId('away-divider');
    await expect(divider).toBeInViewport();
    await expect(back.page.getByTestId('scroll-to-latest')).toBeVisible();
    await back.page.getByTestId('scroll-to-latest').click();
    await expect(back.assistantMessages.last()).toBeInViewport();
  });

  test('a hidden tab says the chat is blocked once a failed message holds the queue', async ({
    context,
    page,
    chat,
    dock,
  }) => {
    await instrument(context);
    await chat.startThread(`long ${LONG}`);
    await expect(chat.stopButton).toBeVisible();
    await chat.send('[[fail]] this one breaks');
    await chat.send('waits behind it');
    await dock.expectTexts(['[[fail]] this one breaks', 'waits behind it']);
    const title = await page.title();

    await setHidden(page, true);
    await expect(page).toHaveTitle(`Blocked · ${title}`, { timeout: 60_000 });
    await setHidden(page, false);
    await expect(page).toHaveTitle(title);
    await expect(dock.item(0)).toHaveAttribute('data-status', 'failed');
  });

  test('a hidden tab says a reply waits for an approval, in its title and one notification (H3)', async ({
    context,
    page,
    chat,
  }) => {
    await context.grantPermissions(['notifications']);
    await instrument(context);
    await chat.startThread('first [[words:3]]');
    await chat.waitForIdle();
    const title = await page.title();

    await setHidden(page, true);
    await chat.send('remember the milk [[tool:save_note]] [[words:6]]');
    await expect(page).toHaveTitle(`Approval needed · ${title}`, { timeout: 30_000 });
    await expect
      .poll(async () =>
        (await notifications(page))
          .filter((shown) => shown.title.startsWith('Approval needed:'))
          .map((shown) => shown.body),
      )
      .toEqual(['The reply waits for you to allow or deny save_note.']);

    await setHidden(page, false);
    await expect(page).toHaveTitle(title);
    await page.getByTestId('transcript').getByRole('button', { name: 'Approve', exact: true }).click();
    await chat.waitForIdle();
    await expect(page).toHaveTitle(title);
  });

  test('with the switch off, closing the page leaves the queue waiting until a page opens (Q10)', async ({
    context,
    page,
    chat,
    dock,
  }) => {
    const url = await chat.startThread(`first ${LONG}`);
    const threadId = url.split('/').at(-1) ?? '';
    await chat.send('waits for me');
    await dock.expectTexts(['waits for me']);
    await expect(drainSwitch(dock)).toHaveAttribute('aria-checked', 'false');
    await page.close();
    await expect
      .poll(async () => (await detailOf(context, threadId)).turnQueue.activeTurn, { timeout: 30_000 })
      .toBeNull();
    const detail = await detailOf(context, threadId);
    expect(detail.turnQueue.items.map((item) => item.text)).toEqual(['waits for me']);

    const back = new ChatPage(await context.newPage());
    await back.page.goto(url);
    await expect(back.repliesTo('waits for me')).toHaveCount(1, { timeout: 30_000 });
  });
});
