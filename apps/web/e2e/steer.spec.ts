import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';

/**
 * Six tool steps, 4 s apart, then a short answer (a word every 4 s too): a steer sent while the
 * steps run waits in the Dock until the next step boundary, then the reply takes it in and goes on
 * with its steps. Steps 1.5 s apart were too short on a slow host: the steer was taken in before
 * the Dock had shown it waiting.
 */
const MULTI_STEP = 'plan a trip [[steps:6]] [[delay:4000]] [[words:8]]';

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
      await expect(page.userMessages.last().getByTestId('steered-badge')).toHaveText('Steered');
      await expect(page.userMessages.first().getByTestId('steered-badge')).toHaveCount(0);
      await expect(page.assistantMessages).toHaveCount(2);
      await expect(page.stopButton).toBeVisible();
    }
    for (const page of [chat, otherChat]) {
      await expect(page.lastReply()).toContainText('(steered) You added: "also book a hotel"', {
        timeout: 60_000,
      });
    }

    await chat.waitForIdle();
    await otherChat.waitForIdle();
    await otherChat.reload();
    await expect(otherChat.userMessages).toHaveCount(2);
    await expect(otherChat.userMessages.last()).toContainText('also book a hotel');
    // Afterwards the steer still looks like one.
    await expect(otherChat.userMessages.last().getByTestId('steered-badge')).toHaveText('Steered');
    await expect(otherChat.assistantMessages).toHaveCount(2);
    expect(await otherChat.replyText(otherChat.lastReply())).toBe(await chat.replyText(chat.lastReply()));
  });

  test('a pending steer can be edited and deleted in the Dock until the reply takes it in (Q8)', async ({
    chat,
    dock,
  }) => {
    // Steps far apart: the steers wait long enough to be changed before the next boundary.
    await chat.startThread('plan a trip [[steps:3]] [[delay:4000]] [[words:5]]');
    await expect(chat.lastReply().locator('[data-tool-name="current_time"]').first()).toBeVisible({
      timeout: 10_000,
    });
    await chat.composerInput.fill('also book a hotel');
    await chat.composerInput.press('Control+Enter');
    await expect(dock.item(0).getByTestId('queue-item-steer')).toBeVisible();

    // Edited while it waits: the reply takes in the new words.
    await dock.edit(0, 'also book a train');
    await expect(dock.itemText(0)).toHaveText('also book a train');
    await expect(chat.userMessages.filter({ hasText: 'also book a train' })).toHaveCount(1, {
      timeout: 20_000,
    });
    await expect(chat.userMessages.filter({ hasText: 'also book a hotel' })).toHaveCount(0);

    // Another steer, deleted while it waits: it never reaches the reply.
    await chat.composerInput.fill('and a car');
    await chat.composerInput.press('Control+Enter');
    await expect(dock.item(0).getByTestId('queue-item-steer')).toBeVisible();
    await dock.delete(0);
    await dock.expectTexts([]);
    // Stopped now, the reply has nothing left to requeue: the deleted steer is gone for good.
    await chat.stopButton.click();
    await chat.waitForIdle();
    await dock.expectTexts([]);
    await expect(chat.userMessages.filter({ hasText: 'and a car' })).toHaveCount(0);
    await expect(chat.userMessages).toHaveCount(2);
  });
});
