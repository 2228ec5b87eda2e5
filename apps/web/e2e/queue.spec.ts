import { turnErrorMessages } from '@chat/contracts';
import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';

/**
 * A reply long enough to queue things behind it on a slow machine (about 45 s with 30 ms between
 * words); the tests stop it or leave it running, none waits for its end.
 */
const LONG = '[[words:1500]] [[delay:30]]';

test.describe('queued turns', () => {
  test('a message sent while a reply streams is queued in the dock, then runs next (Q3, Q7)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('[[words:300]] [[delay:30]] first');
    await expect(chat.stopButton).toBeVisible();

    await chat.send('second');
    await dock.expectTexts(['second']);
    // Queued turns live in the dock, never in the transcript.
    await expect(chat.userMessages).toHaveCount(1);

    // When the first reply ends, this viewer claims the head and its reply streams.
    await expect(chat.userMessages).toHaveCount(2, { timeout: 30_000 });
    await expect(chat.userMessages.last()).toContainText('second');
    await expect(chat.lastReply()).toContainText('You said: "second"');
    await dock.expectTexts([]);
  });

  test('queued messages can be edited in place and deleted; the composer waits during an edit (Q8)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread(`${LONG} long one`);
    await expect(chat.stopButton).toBeVisible();
    await chat.send('alpha');
    await dock.expectTexts(['alpha']);
    await chat.send('beta');
    await dock.expectTexts(['alpha', 'beta']);

    // Escape cancels an edit and changes nothing; the composer is disabled meanwhile.
    const editor = await dock.startEditing(0);
    await expect(chat.composerInput).toBeDisabled();
    await editor.fill('something else');
    await editor.press('Escape');
    await expect(dock.editor(0)).toBeHidden();
    await expect(chat.composerInput).toBeEnabled();
    await dock.expectTexts(['alpha', 'beta']);

    await dock.edit(0, 'alpha, edited');
    await dock.expectTexts(['alpha, edited', 'beta']);
    await expect(chat.composerInput).toBeEnabled();

    await dock.delete(1);
    await dock.expectTexts(['alpha, edited']);

    // The dock is server state: a reload shows the same.
    await chat.reload();
    await dock.expectTexts(['alpha, edited']);
    await expect(chat.userMessages).toHaveCount(1);
  });

  test('the queue holds at most five; the composer says it is full (Q4)', async ({ chat, dock }) => {
    await chat.startThread(`${LONG} cap`);
    await expect(chat.stopButton).toBeVisible();

    const queued: string[] = [];
    for (let n = 1; n <= 5; n++) {
      queued.push(`queued ${n}`);
      await chat.send(`queued ${n}`);
      await dock.expectTexts(queued);
    }
    await expect(dock.counter).toHaveText('5 / 5');
    await expect(chat.queueFullNotice).toContainText('Queue is full');

    await chat.composerInput.fill('one too many');
    await chat.composerInput.press('Enter');
    await expect(chat.composerInput).toHaveValue('one too many');
    await dock.expectTexts(queued);
  });

  test('Stop with items waiting keeps them and pauses the queue; Resume runs the head with the handoff (S1, S3, S5)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread(`${LONG} stop me`);
    await expect(chat.lastReply()).toContainText('You said: "stop me"');
    await chat.send('after the stop');
    await dock.expectTexts(['after the stop']);

    await chat.stopButton.click();

    // The partial reply stays, marked interrupted, at the bottom of the transcript above the Dock.
    await expect(chat.interruptedBadge(chat.reply(0))).toBeVisible({ timeout: 15_000 });
    await expect(chat.interruptedBadge(chat.reply(0))).toBeInViewport({ ratio: 1 });
    // People press Stop because they changed their mind: the queue is kept and paused, and says so.
    await expect(dock.root.getByTestId('queue-status')).toContainText('paused');
    await expect(dock.headStatus()).toHaveText('Paused: resume the queue to run it.');
    await expect(dock.root.getByRole('button', { name: 'Resume the queue' })).toBeVisible();
    await expect(chat.composerHint).toHaveText('Enter adds to the paused queue · Shift+Enter for a new line');
    await chat.page.waitForTimeout(1500);
    await expect(chat.userMessages).toHaveCount(1);
    await dock.expectTexts(['after the stop']);

    // Resume: the head runs next, told that the reply before it was cut off.
    await dock.root.getByRole('button', { name: 'Resume the queue' }).click();
    await expect(chat.userMessages).toHaveCount(2, { timeout: 15_000 });
    await expect(chat.userMessages.last()).toContainText('after the stop');
    await expect(chat.reply(1)).toContainText('You said: "after the stop"');
    expect(await chat.replyText(chat.reply(1))).toMatch(/^\(after interruption\)/);
    await dock.expectTexts([]);
  });

  test('Stop pressed right after Send stops that reply, even before the server has answered the send', async ({
    chat,
    page,
  }) => {
    await chat.startThread('[[words:4]] an earlier exchange');
    await chat.waitForIdle();
    // Hold the send's answer back, so Stop is surely pressed before the server started the turn.
    await page.route('**/api/threads/*/turns', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 700));
      await route.continue();
    });
    await chat.send(`${LONG} stop me at once`);
    await chat.stopButton.click();

    // The reply (45 s long) stops: the page is idle soon, and the server has nothing running.
    await chat.waitForIdle(8_000);
    await page.unroute('**/api/threads/*/turns');
    const threadId = new URL(page.url()).pathname.split('/').pop();
    const detail = await (await page.request.get(`/api/threads/${threadId}`)).json();
    expect(detail.turnQueue.activeTurn).toBeNull();
    await chat.reload();
    await expect(chat.userMessages).toHaveCount(2);
    await expect(chat.userMessages.last()).toContainText('stop me at once');
    await expect(chat.stopButton).toBeHidden();
  });

  test('Stop & send interrupts the reply and the head answers as the new priority (S4, S5)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread(`${LONG} tell me a long story`);
    await expect(chat.lastReply()).toContainText('You said: "tell me a long story"');
    await chat.send('actually, make it short');
    await dock.expectTexts(['actually, make it short']);

    await dock.headAction('Stop & send').click();

    await expect(chat.userMessages).toHaveCount(2, { timeout: 15_000 });
    await expect(chat.userMessages.last()).toContainText('actually, make it short');
    await expect(chat.reply(1)).toContainText('(after interruption)');
    expect(await chat.replyText(chat.reply(1))).toMatch(/^\(after interruption\)/);
    await expect(chat.interruptedBadge(chat.reply(0))).toBeVisible();
    await dock.expectTexts([]);

    await chat.waitForIdle();
    await chat.reload();
    await expect(chat.interruptedBadge(chat.reply(0))).toBeVisible();
    await expect(chat.interruptedBadge(chat.reply(1))).toBeHidden();
  });

  test('a failed head stays at the head and blocks the queue until it is edited (Q11)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('[[words:300]] [[delay:30]] before the failure');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('[[fail]] this one breaks');
    await chat.send('waits behind it');
    await dock.expectTexts(['[[fail]] this one breaks', 'waits behind it']);

    // The first reply ends, the head runs and fails: it stays, with its error, and blocks.
    await expect(dock.headError()).toBeVisible({ timeout: 30_000 });
    await expect(dock.item(0)).toHaveAttribute('data-status', 'failed');
    await expect(dock.headStatus()).toHaveText(
      'Blocked: this message failed. Retry, edit or remove it to continue.',
    );
    await expect(dock.headAction('Send now')).toBeHidden();
    await expect(dock.headAction('Retry')).toBeVisible();
    await expect(chat.stopButton).toBeHidden();
    await dock.expectTexts(['[[fail]] this one breaks', 'waits behind it']);
    // The attempt shows in the transcript, marked failed; its error shows once, in the Dock.
    await expect(chat.failedNote(chat.userMessages.last())).toBeVisible();
    await expect(dock.headError()).toContainText(turnErrorMessages.modelFailed);
    await expect(chat.page.getByText(turnErrorMessages.modelFailed)).toHaveCount(1);

    // Editing makes it queued again; the queue drains in order, without the failed attempt.
    await dock.edit(0, 'fixed now');
    await expect(chat.userMessages.filter({ hasText: 'fixed now' })).toHaveCount(1, { timeout: 15_000 });
    await expect(chat.assistantMessages.filter({ hasText: 'You said: "fixed now"' })).toHaveCount(1);
    await expect(chat.assistantMessages.filter({ hasText: 'You said: "waits behind it"' })).toHaveCount(1, {
      timeout: 15_000,
    });
    await dock.expectTexts([]);
    await expect(chat.userMessages.filter({ hasText: 'this one breaks' })).toHaveCount(0);
  });

  test('Remove and continue takes the failed attempt out and lets a paused queue go on (Q11, S3)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('[[words:300]] [[delay:30]] before the failure');
    await chat.send('[[fail]] this one breaks');
    await chat.send('waits behind it');
    await expect(dock.headError()).toBeVisible({ timeout: 30_000 });
    await dock.root.getByRole('button', { name: 'Pause the queue' }).click();
    await expect(dock.root.getByTestId('queue-status')).toContainText('paused');

    // An explicit choice to go on: the attempt goes, the pause ends, the next item runs.
    await dock.removeAndContinue();
    await expect(chat.assistantMessages.filter({ hasText: 'You said: "waits behind it"' })).toHaveCount(1, {
      timeout: 15_000,
    });
    await dock.expectTexts([]);
    await expect(chat.userMessages.filter({ hasText: 'this one breaks' })).toHaveCount(0);
  });

  test('a head that fails after some text shows its error after a reload, and Retry runs it again (Q11)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('[[words:300]] [[delay:30]] first');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('half an answer [[fail-after:3]]');
    await chat.send('waits behind it');
    await expect(dock.headError()).toBeVisible({ timeout: 40_000 });
    // Both sends were accepted before the reload (a reload would cut off a send still on its way).
    await dock.expectTexts(['half an answer [[fail-after:3]]', 'waits behind it']);

    await chat.reload();
    await expect(dock.item(0)).toHaveAttribute('data-status', 'failed');
    await dock.expectTexts(['half an answer [[fail-after:3]]', 'waits behind it']);
    const partial = chat.reply(1);
    await expect(chat.failedNote(partial)).toBeVisible();
    await expect(dock.headError()).toContainText(turnErrorMessages.modelFailed);
    expect((await chat.replyText(partial)).split(/\s+/)).toHaveLength(3);

    await dock.headAction('Retry').click();
    // It runs again in place of the failed attempt (and fails again: its text asks for that).
    await expect(chat.stopButton).toBeHidden({ timeout: 15_000 });
    await expect(dock.headError()).toBeVisible();
    await expect(chat.userMessages.filter({ hasText: 'half an answer' })).toHaveCount(1);
    await expect(chat.assistantMessages).toHaveCount(2);
    await expect(chat.failedNote(chat.reply(1))).toBeVisible();
    await dock.expectTexts(['half an answer [[fail-after:3]]', 'waits behind it']);

    // Remove and continue resolves it: the attempt leaves the transcript and the next item runs.
    await dock.removeAndContinue();
    await expect(chat.repliesTo('waits behind it')).toHaveCount(1, { timeout: 15_000 });
    await expect(chat.userMessages.filter({ hasText: 'half an answer' })).toHaveCount(0);
    await dock.expectTexts([]);
  });

  test('with no viewer attached the queue waits; opening the chat again drains it (Q10)', async ({
    chat,
    dock,
    page,
  }) => {
    const url = await chat.startThread('[[words:400]] [[delay:30]] nobody watching');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('waiting for a viewer');
    await dock.expectTexts(['waiting for a viewer']);

    // Leave the thread: no tab follows it while its reply ends on the server.
    await page.goto('/');
    await chat.waitUntilReady();
    const threadId = new URL(url).pathname.split('/').pop();
    const detailOf = async () => await (await page.request.get(`/api/threads/${threadId}`)).json();
    await expect
      .poll(async () => (await detailOf()).turnQueue.activeTurn === null, { timeout: 40_000 })
      .toBe(true);
    // Nothing ran it meanwhile.
    expect((await detailOf()).turnQueue.items).toHaveLength(1);

    // Opening the chat attaches this page: the head starts by itself, as an ordinary turn.
    await page.goto(url);
    await expect(chat.reply(1)).toContainText('You said: "waiting for a viewer"', { timeout: 15_000 });
    expect(await chat.replyText(chat.reply(1))).not.toMatch(/^\(after interruption\)/);
    await dock.expectTexts([]);
  });

  test('a reload with queued items and nothing running starts the head by itself (Q10)', async ({
    chat,
    dock,
    page,
    baseURL,
  }) => {
    const url = await chat.startThread('[[words:600]] [[delay:30]] a long one');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('first in line');
    await chat.send('second in line');
    await dock.expectTexts(['first in line', 'second in line']);

    // Stop it from outside the page (no tab claims meanwhile: this page is gone).
    const threadId = new URL(url).pathname.split('/').pop();
    await page.goto('about:blank');
    // Sent as the page would send it: the API refuses a write without the app's Origin.
    const stopped = await page.request.post(`/api/threads/${threadId}/interrupt`, {
      headers: { origin: baseURL as string },
    });
    expect(stopped.status()).toBe(200);
    // With items waiting the interrupt paused the queue (S3): resume it, from outside too.
    const resumed = await page.request.put(`/api/threads/${threadId}/queue/paused`, {
      headers: { origin: baseURL as string },
      data: { paused: false },
    });
    expect(resumed.status()).toBe(200);

    await page.goto(url);
    await expect(chat.repliesTo('first in line')).toHaveCount(1, { timeout: 15_000 });
    await expect(chat.repliesTo('second in line')).toHaveCount(1, { timeout: 15_000 });
    await dock.expectTexts([]);
  });

  test('the Dock says why the head waits, and the composer that Enter adds to the queue', async ({
    chat,
    dock,
    page,
    baseURL,
  }) => {
    const url = await chat.startThread(`${LONG} status lines`);
    await expect(chat.stopButton).toBeVisible();
    await expect(chat.composerHint).toHaveText(
      'Enter adds to the queue · Ctrl+Enter steers the current reply · Shift+Enter for a new line',
    );
    await chat.send('one');
    await chat.send('two');
    await dock.expectTexts(['one', 'two']);
    await expect(dock.headStatus()).toHaveText('Runs after the current reply.');
    // The other items say their position (to screen readers too) and when they run.
    await expect(dock.item(1).getByTestId('queue-item-position')).toContainText('Position 2 of 2');
    await expect(dock.when(1)).toHaveText('Runs after the current reply and 1 more.');

    // Leave, and stop the reply from outside: no page is attached, so the queue waits.
    const threadId = new URL(url).pathname.split('/').pop();
    await page.goto('about:blank');
    expect(
      (
        await page.request.post(`/api/threads/${threadId}/interrupt`, {
          headers: { origin: baseURL as string },
        })
      ).status(),
    ).toBe(200);
    // With items waiting the interrupt paused the queue (S3): resume it, from outside too.
    expect(
      (
        await page.request.put(`/api/threads/${threadId}/queue/paused`, {
          headers: { origin: baseURL as string },
          data: { paused: false },
        })
      ).status(),
    ).toBe(200);

    // A page whose events stream cannot connect is not attached: the head waits for it.
    await page.route('**/api/threads/*/events', (route) => route.abort());
    await page.goto(url);
    await chat.waitUntilReady();
    await expect(dock.headStatus()).toHaveText('Waiting for this page to reconnect.');
    await expect(chat.composerHint).toHaveText('Enter adds to the queue · Shift+Enter for a new line');
    await expect(chat.stopButton).toBeHidden();
    await dock.expectTexts(['one', 'two']);

    // Once the stream connects (EventSource retries by itself), the page drains the queue.
    await page.unroute('**/api/threads/*/events');
    await expect(chat.repliesTo('one')).toHaveCount(1, { timeout: 20_000 });
    await expect(chat.repliesTo('two')).toHaveCount(1, { timeout: 15_000 });
    await dock.expectTexts([]);
    await chat.waitForIdle();
    await expect(chat.composerHint).toHaveText('Enter sends · Shift+Enter for a new line');
  });

  test('a reload in the middle of a reply attaches to it and keeps streaming', async ({ chat }) => {
    await chat.startThread('[[words:8]] an earlier exchange');
    await chat.waitForIdle();
    await chat.send('[[words:500]] [[delay:30]] keep going');
    await expect(chat.lastReply()).toContainText('You said: "keep going"');

    await chat.reload();
    await expect(chat.stopButton).toBeVisible();
    const reply = chat.lastReply();
    await expect(reply).toContainText('You said: "keep going"');
    // The history is there while the running reply streams in.
    await expect(chat.userMessages).toHaveCount(2);
    await expect(chat.userMessages.first()).toContainText('an earlier exchange');
    const partial = await chat.replyText(reply);
    await expect.poll(async () => (await chat.replyText(reply)).length).toBeGreaterThan(partial.length);

    await chat.waitForIdle();
    await expect(chat.userMessages).toHaveCount(2);
    await expect(chat.assistantMessages).toHaveCount(2);
    const full = await chat.replyText(reply);
    await chat.reload();
    expect(await chat.replyText(chat.lastReply())).toBe(full);
  });

  test('two tabs on one thread show the same stream and the same dock', async ({ chat, dock, context }) => {
    // Long enough to outlast every step below on a busy machine; Stop & send cuts it anyway.
    const url = await chat.startThread('[[words:3000]] [[delay:30]] shared');
    await expect(chat.stopButton).toBeVisible();

    const other = await context.newPage();
    const otherChat = new ChatPage(other);
    const otherDock = new QueueDock(other);
    await other.goto(url);
    await otherChat.waitUntilReady();

    // The second tab attaches to the running reply.
    await expect(otherChat.lastReply()).toContainText('You said: "shared"');
    await expect(otherChat.stopButton).toBeVisible();

    // Queue changes in one tab show in the other.
    await chat.send('from tab one');
    await otherDock.expectTexts(['from tab one']);
    await otherChat.send('from tab two');
    await dock.expectTexts(['from tab one', 'from tab two']);
    await otherDock.delete(1);
    await dock.expectTexts(['from tab one']);

    // Stop & send in the second tab: both tabs end up with the same transcript.
    await otherDock.headAction('Stop & send').click();
    await expect(chat.userMessages).toHaveCount(2, { timeout: 15_000 });
    await expect(chat.reply(1)).toContainText('(after interruption)');
    await chat.waitForIdle();
    await otherChat.waitForIdle();
    await dock.expectTexts([]);
    await otherDock.expectTexts([]);
    await expect(otherChat.assistantMessages).toHaveCount(2);
    expect(await otherChat.replyText(otherChat.reply(1))).toBe(await chat.replyText(chat.reply(1)));
  });
});
