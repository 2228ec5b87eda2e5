import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';

/**
 * Eight tool steps, 1.5 s apart, then a short answer: a steer sent while the steps run waits in
 * the Dock until the next step boundary, then the reply takes it in and goes on with its steps.
 */
const MULTI_STEP = 'plan a trip [[steps:8]] [[delay:1500]] [[words:10]]';

test.describe('steer', () => {
  test('Ctrl+Enter steers a multi-step reply; the transcript rolls in both tabs and after a reload', async ({
    chat,
    dock,
    context,
  }) => {
    const url = await chat.startThread(MULTI_STEP);
    // The first step's tool card is in: the reply is between steps.
    await expect(chat.lastReply().locator('[data-tool-name="current_time"]').first()).toBeVisible({
      timeout: 10_000,
    });
    await expect(chat.composerHint).toContainText('Ctrl+Enter steers');
    await chat.composerInput.fill('also book a hotel');
    // Typed text offers both: Enter queues (the default), Steer (or Ctrl+Enter) steers.
    await expect(chat.page.getByTestId('steer')).toBeVisible();
    await expect(chat.page.getByRole('button', { name: 'Queue message' })).toBeVisible();
    await chat.composerInput.press('Control+Enter');
    await expect(chat.composerInput).toHaveValue('');

    // The Dock marks it while it waits for the next step; then it joins the reply.
    await expect(dock.item(0).getByTestId('queue-item-steer')).toBeVisible();
    await expect(dock.item(0).getByTestId('queue-item-steer-status')).toHaveText(
      'Joins the current reply at its next step',
    );
    await dock.expectTexts([]);

    // Another tab follows the same reply, steps still running.
    const other = await context.newPage();
    const otherChat = new ChatPage(other);
    await other.goto(url);
    await otherChat.waitUntilReady();

    // The roll in both tabs: reply so far, the steer, the continuation (still streaming).
    for (const page of [chat, otherChat]) {
      await expect(page.userMessages).toHaveCount(2);
      await expect(page.userMessages.last()).toContainText('also book a hotel');
      await expect(page.assistantMessages).toHaveCount(2);
      await expect(page.stopButton).toBeVisible();
    }
    for (const page of [chat, otherChat]) {
      await expect(page.lastReply()).toContainText('(steered) You added: "also book a hotel"', {
        timeout: 30_000,
      });
    }

    await chat.waitForIdle();
    await otherChat.waitForIdle();
    await otherChat.reload();
    await expect(otherChat.userMessages).toHaveCount(2);
    await expect(otherChat.userMessages.last()).toContainText('also book a hotel');
    await expect(otherChat.assistantMessages).toHaveCount(2);
    expect(await otherChat.replyText(otherChat.lastReply())).toBe(await chat.replyText(chat.lastReply()));
  });
});
