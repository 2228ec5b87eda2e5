import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';

/** The tool card of the last tool call in the transcript, and its parts. */
function toolCard(page: Page) {
  const card = page.getByTestId('transcript').getByTestId('tool-call').last();
  return {
    card,
    outcome: card.getByTestId('tool-call-outcome'),
    args: card.getByTestId('tool-call-args'),
    result: card.getByTestId('tool-call-result'),
    /** A decided call is one line; this opens it to its arguments and result. */
    toggle: card.getByTestId('tool-call-toggle'),
    approve: card.getByRole('button', { name: 'Approve', exact: true }),
    deny: card.getByRole('button', { name: 'Deny', exact: true }),
  };
}

async function expectWaiting(chat: ChatPage, dock: QueueDock, card: ReturnType<typeof toolCard>) {
  await expect(card.outcome).toHaveText('Waiting for your approval');
  await expect(dock.headStatus()).toHaveText('Waits for the approval in the reply above.');
  await expect(chat.composer).toContainText('Waiting for an approval');
}

/** Stays true for a while: the queued message does not run while the approval is pending. */
async function expectStillQueued(chat: ChatPage, dock: QueueDock, text: string, userMessages: number) {
  await chat.page.waitForTimeout(1500);
  await dock.expectTexts([text]);
  await expect(chat.userMessages).toHaveCount(userMessages);
}

test.describe('tool approvals (H3, Q12)', () => {
  test('approve: the note is saved, the reply continues, then the queued message runs', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('remember the milk [[tool:save_note]] [[words:12]]');
    const card = toolCard(chat.page);
    await expect(card.approve).toBeVisible();
    await expect(card.args).toHaveText(/"text": "remember the milk"/);
    await expect(chat.stopButton).toBeVisible();

    await chat.send('after the note [[words:5]]');
    await dock.expectTexts(['after the note [[words:5]]']);
    await expectWaiting(chat, dock, card);
    await expectStillQueued(chat, dock, 'after the note [[words:5]]', 1);

    // Keyboard: the buttons are reachable and work with Enter.
    await card.approve.focus();
    await chat.page.keyboard.press('Enter');
    await expect(card.outcome).toHaveText('You approved saving the note');
    await card.toggle.click();
    await expect(card.result).toContainText('"saved": true');
    await expect(chat.repliesTo('after the note')).toHaveCount(1, { timeout: 20_000 });
    await expect(chat.assistantMessages.filter({ hasText: 'The tool save_note returned' })).toHaveCount(1);
    await dock.expectTexts([]);
    await chat.waitForIdle();
    // The continued stream was read into the reply that holds the tool call: nothing went wrong.
    await expect(chat.errorBanner).toHaveCount(0);
    // A row of actions per reply (the approved one and the queued one's): the approved reply's
    // continuation is a message of its own, and the row goes under it only.
    await expect(chat.transcript.getByTestId('reply-actions')).toHaveCount(2);

    await chat.page.getByTestId('notes-button').click();
    await expect(chat.page.getByTestId('note')).toHaveText([/remember the milk/]);

    // Server state: a reload shows the same outcome.
    await chat.reload();
    await expect(toolCard(chat.page).outcome).toHaveText('You approved saving the note');
    await expect(chat.transcript.getByTestId('reply-actions')).toHaveCount(2);
    await expect(chat.page.getByTestId('notes-button')).toHaveText('Notes (1)');
  });

  test('deny in one tab: the other tab follows, nothing is saved, then the queued message runs', async ({
    chat,
    dock,
    context,
  }) => {
    const url = await chat.startThread('<img src=x onerror=alert(1)> secret [[tool:save_note]] [[words:12]]');
    const card = toolCard(chat.page);
    await expect(card.deny).toBeVisible();
    // Arguments are text, never markup.
    await expect(card.args).toContainText('<img src=x onerror=alert(1)> secret');
    await expect(chat.transcript.locator('img')).toHaveCount(0);

    const other = await context.newPage();
    const otherChat = new ChatPage(other);
    const otherDock = new QueueDock(other);
    await other.goto(url);
    await otherChat.waitUntilReady();
    const otherCard = toolCard(other);
    await expect(otherCard.approve).toBeVisible();

    await otherChat.send('meanwhile [[words:5]]');
    await dock.expectTexts(['meanwhile [[words:5]]']);
    await expectWaiting(otherChat, otherDock, otherCard);
    await expectStillQueued(chat, dock, 'meanwhile [[words:5]]', 1);

    await card.deny.click();
    await expect(card.outcome).toHaveText('You denied saving the note');
    await expect(otherCard.outcome).toHaveText('You denied saving the note');
    await expect(otherCard.approve).toBeHidden();
    await expect(
      chat.assistantMessages.filter({ hasText: 'was denied, so I answer without it' }),
    ).toHaveCount(1);
    await expect(otherChat.repliesTo('meanwhile')).toHaveCount(1, { timeout: 20_000 });
    await expect(chat.repliesTo('meanwhile')).toHaveCount(1, { timeout: 20_000 });
    await chat.waitForIdle();
    await otherChat.waitForIdle();
    await expect(other.getByTestId('notes-button')).toHaveText('Notes');
    await otherChat.reload();
    await expect(otherChat.repliesTo('meanwhile')).toHaveCount(1);
    // The denied reply and the one after it: a row of actions each, not two for the denied one.
    await expect(otherChat.transcript.getByTestId('reply-actions')).toHaveCount(2);
  });

  test('Stop while waiting cancels the approval and keeps the queue, paused', async ({ chat, dock }) => {
    await chat.startThread('maybe later [[tool:save_note]]');
    const card = toolCard(chat.page);
    await expect(card.approve).toBeVisible();
    await chat.send('still queued [[words:12]]');
    await dock.expectTexts(['still queued [[words:12]]']);

    await chat.stopButton.click();
    await expect(card.outcome).toHaveText(
      'Not run: the reply was stopped before you decided on saving the note',
    );
    await expect(card.approve).toBeHidden();
    // Stop with an item waiting pauses the queue (S3); on Resume the approval no longer blocks it:
    // this viewer claims the head (Q10), which runs with the handoff, as after any interrupt (S5).
    await expect(dock.headStatus()).toHaveText('Paused: resume the queue to run it.');
    await dock.root.getByRole('button', { name: 'Resume the queue' }).click();
    await expect(chat.repliesTo('still queued')).toHaveCount(1, { timeout: 20_000 });
    await expect(chat.repliesTo('still queued')).toContainText('(after interruption)');
  });
});
