import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';

/** A reply long enough to queue things behind it (about 12 s with 30 ms between words). */
const LONG = '[[words:400]] [[delay:30]]';

test.describe('queued turns', () => {
  test('a message sent while a reply streams is queued in the dock, then runs next (Q3, Q7)', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('[[words:120]] [[delay:30]] first');
    await expect(chat.stopButton).toBeVisible();

    await chat.send('second');
    await dock.expectTexts(['second']);
    // Queued turns live in the dock, never in the transcript.
    await expect(chat.userMessages).toHaveCount(1);

    // When the first reply ends, this viewer claims the head and its reply streams.
    await expect(chat.userMessages).toHaveCount(2, { timeout: 20_000 });
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

  test('Stop keeps the queue, and the head runs next (S1, S3)', async ({ chat, dock }) => {
    await chat.startThread(`${LONG} stop me`);
    await expect(chat.lastReply()).toContainText('You said: "stop me"');
    await chat.send('after the stop');
    await dock.expectTexts(['after the stop']);

    await chat.stopButton.click();

    // The partial reply stays, marked interrupted; the queued head runs as a normal turn.
    await expect(chat.interruptedBadge(chat.reply(0))).toBeVisible({ timeout: 15_000 });
    await expect(chat.userMessages).toHaveCount(2, { timeout: 15_000 });
    await expect(chat.userMessages.last()).toContainText('after the stop');
    await expect(chat.reply(1)).toContainText('You said: "after the stop"');
    expect(await chat.replyText(chat.reply(1))).not.toMatch(/^\(after interruption\)/);
    await dock.expectTexts([]);
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
    await chat.startThread('[[words:150]] [[delay:30]] before the failure');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('[[fail]] this one breaks');
    await chat.send('waits behind it');
    await dock.expectTexts(['[[fail]] this one breaks', 'waits behind it']);

    // The first reply ends, the head runs and fails: it stays, with its error, and blocks.
    await expect(dock.headError()).toBeVisible({ timeout: 20_000 });
    await expect(dock.item(0)).toHaveAttribute('data-status', 'failed');
    await expect(dock.headAction('Send now')).toBeHidden();
    await expect(chat.stopButton).toBeHidden();
    await dock.expectTexts(['[[fail]] this one breaks', 'waits behind it']);

    // Editing makes it queued again; the queue drains in order.
    await dock.edit(0, 'fixed now');
    await expect(chat.userMessages.filter({ hasText: 'fixed now' })).toHaveCount(1, { timeout: 15_000 });
    await expect(chat.assistantMessages.filter({ hasText: 'You said: "fixed now"' })).toHaveCount(1);
    await expect(chat.assistantMessages.filter({ hasText: 'You said: "waits behind it"' })).toHaveCount(1, {
      timeout: 15_000,
    });
    await dock.expectTexts([]);
  });

  test('with no viewer attached the queue waits; Send now runs its head (Q10)', async ({
    chat,
    dock,
    page,
  }) => {
    const url = await chat.startThread('[[words:60]] [[delay:30]] nobody watching');
    await expect(chat.stopButton).toBeVisible();
    await chat.send('waiting for a viewer');
    await dock.expectTexts(['waiting for a viewer']);

    // Leave the thread: no tab follows it while its reply ends on the server.
    await page.goto('/');
    await chat.waitUntilReady();
    const threadId = new URL(url).pathname.split('/').pop();
    await expect
      .poll(
        async () => {
          const detail = await (await page.request.get(`/api/threads/${threadId}`)).json();
          return detail.turnQueue.activeTurn === null;
        },
        { timeout: 20_000 },
      )
      .toBe(true);

    await page.goto(url);
    await chat.waitUntilReady();
    await dock.expectTexts(['waiting for a viewer']);
    await expect(chat.assistantMessages).toHaveCount(1);
    await expect(chat.stopButton).toBeHidden();

    await dock.headAction('Send now').click();
    await expect(chat.reply(1)).toContainText('You said: "waiting for a viewer"');
    expect(await chat.replyText(chat.reply(1))).not.toMatch(/^\(after interruption\)/);
    await dock.expectTexts([]);
  });

  test('a reload in the middle of a reply attaches to it and keeps streaming', async ({ chat }) => {
    await chat.startThread('[[words:8]] an earlier exchange');
    await chat.waitForIdle();
    await chat.send('[[words:150]] [[delay:40]] keep going');
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
    const url = await chat.startThread(`${LONG} shared`);
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
