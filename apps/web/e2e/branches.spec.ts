import { expect, test } from './fixtures';
import { ChatPage } from './pages/ChatPage';

/** What the API says when a version change meets a running reply (409 thread_busy). */
const BUSY = 'Wait for the reply to finish, or stop it, before changing versions.';
/** A reply that runs until it is stopped (30 s). */
const LONG = '[[words:1000]] [[delay:30]]';

test.describe('versions of a conversation', () => {
  test('the manual QA smoke: edit, switch, continue and delete, reload (B1-B5)', async ({ chat }) => {
    const first = chat.userMessages.first();
    let originalReply = '';
    let beachReply = '';

    await test.step('1. a message edited into a new version leaves the original version unchanged (B1)', async () => {
      await chat.startThread('Plan a picnic [[words:6]]');
      await expect(chat.lastReply()).toContainText('You said: "Plan a picnic"');
      await chat.waitForIdle();
      originalReply = await chat.replyText(chat.lastReply());
      await expect(chat.versionControls()).toHaveCount(0);

      await chat.editMessage(first, 'Plan a beach picnic [[words:6]]');
      // The transcript is the edited message and its new reply; nothing of the original.
      await expect(chat.messageText(first)).toHaveText('Plan a beach picnic [[words:6]]');
      await expect(chat.lastReply()).toContainText('You said: "Plan a beach picnic"');
      await chat.waitForIdle();
      beachReply = await chat.replyText(chat.lastReply());
      expect(beachReply).toMatch(/^You said: "Plan a beach picnic"/);
      await expect(chat.userMessages).toHaveCount(1);
      await expect(chat.assistantMessages).toHaveCount(1);
      await expect(chat.versionLabel()).toHaveText('2 / 2');

      await chat.previousVersion();
      await expect(chat.userMessages).toHaveCount(1);
      await expect(chat.messageText(first)).toHaveText('Plan a picnic [[words:6]]');
      await expect(chat.assistantMessages).toHaveCount(1);
      await expect(chat.lastReplyText()).toHaveText(originalReply);
    });

    await test.step('2. each version shows only its own assistant reply (B2)', async () => {
      await expect(chat.versionLabel()).toHaveText('1 / 2');
      await expect(chat.repliesTo('Plan a beach picnic')).toHaveCount(0);

      await chat.nextVersion();
      await expect(chat.messageText(first)).toHaveText('Plan a beach picnic [[words:6]]');
      await expect(chat.assistantMessages).toHaveCount(1);
      await expect(chat.lastReplyText()).toHaveText(beachReply);
      await expect(chat.repliesTo('Plan a picnic')).toHaveCount(0);

      await chat.previousVersion();
      await expect(chat.lastReplyText()).toHaveText(originalReply);
      await expect(chat.repliesTo('Plan a beach picnic')).toHaveCount(0);
      await chat.nextVersion();
      await expect(chat.lastReplyText()).toHaveText(beachReply);
    });

    await test.step('3. continuing appends to the selected version; deleting the latest turn removes only that tail (B3, B4)', async () => {
      await chat.send('What should I bring? [[words:8]]');
      await expect(chat.userMessages).toHaveCount(2);
      await expect(chat.lastReply()).toContainText('You said: "What should I bring?"');
      await chat.waitForIdle();
      await expect(chat.assistantMessages).toHaveCount(2);
      await expect(chat.versionLabel()).toHaveText('2 / 2');
      // Only the latest user message can be deleted.
      await expect(chat.deleteButton(first)).toHaveCount(0);

      await chat.deleteLatest();
      await expect(chat.userMessages).toHaveCount(1);
      await expect(chat.assistantMessages).toHaveCount(1);
      await expect(chat.transcript).not.toContainText('What should I bring?');
      await expect(chat.messageText(first)).toHaveText('Plan a beach picnic [[words:6]]');
      await expect(chat.lastReplyText()).toHaveText(beachReply);
      await expect(chat.versionLabel()).toHaveText('2 / 2');

      // The sibling version is intact.
      await chat.previousVersion();
      await expect(chat.userMessages).toHaveCount(1);
      await expect(chat.messageText(first)).toHaveText('Plan a picnic [[words:6]]');
      await expect(chat.assistantMessages).toHaveCount(1);
      await expect(chat.lastReplyText()).toHaveText(originalReply);
    });

    await test.step('4. after a reload the selected version and its controls are still there (B5)', async () => {
      await chat.nextVersion();
      await expect(chat.lastReplyText()).toHaveText(beachReply);

      await chat.reload();
      await expect(chat.versionLabel()).toHaveText('2 / 2');
      await expect(chat.messageText(first)).toHaveText('Plan a beach picnic [[words:6]]');
      await expect(chat.assistantMessages).toHaveCount(1);
      await expect(chat.lastReplyText()).toHaveText(beachReply);
    });
  });

  test('versions cannot change while a reply streams; the server refuses a tab that missed it (thread_busy)', async ({
    chat,
    context,
  }) => {
    const first = chat.userMessages.first();
    const url = await chat.startThread('Draft an email [[words:8]]');
    await chat.waitForIdle();
    await chat.editMessage(first, 'Draft a short email [[words:8]]');
    await chat.waitForIdle();
    await expect(chat.versionLabel()).toHaveText('2 / 2');

    await test.step('while a reply streams, Edit and the version arrows are disabled', async () => {
      await chat.send(`${LONG} a long one`);
      await expect(chat.stopButton).toBeVisible();
      await expect(chat.editButton(first)).toBeDisabled();
      await expect(chat.previousVersionButton()).toBeDisabled();
      await expect(chat.editButton()).toBeDisabled();
      await expect(chat.deleteButton()).toBeDisabled();

      await chat.stopButton.click();
      await chat.waitForIdle();
      await expect(chat.editButton(first)).toBeEnabled();
      await expect(chat.previousVersionButton()).toBeEnabled();
      await expect(chat.deleteButton()).toBeEnabled();
    });

    await test.step('a tab that has not heard of the reply is refused, shows why, and changes nothing', async () => {
      // This tab misses every thread event, so it believes the thread is idle.
      const stale = await context.newPage();
      await stale.route('**/api/threads/*/events', (route) => route.abort());
      const staleChat = new ChatPage(stale);
      await stale.goto(url);
      await staleChat.waitUntilReady();
      await expect(staleChat.userMessages).toHaveCount(2);
      await expect(staleChat.versionLabel()).toHaveText('2 / 2');

      await chat.send(`${LONG} another long one`);
      await expect(chat.stopButton).toBeVisible();

      const staleFirst = staleChat.userMessages.first();
      const editor = await staleChat.startEditing(staleFirst);
      await editor.fill('Draft a long email [[words:8]]');
      await editor.press('Enter');
      await expect(staleChat.errorBanner).toContainText(BUSY);
      // The edit stays open to try again later; the transcript is as it was.
      await expect(staleChat.messageEditor).toHaveValue('Draft a long email [[words:8]]');
      await editor.press('Escape');
      await expect(staleChat.messageEditor).toBeHidden();
      await expect(staleChat.messageText(staleFirst)).toHaveText('Draft a short email [[words:8]]');
      await expect(staleChat.userMessages).toHaveCount(2);
      await staleChat.errorBanner.getByRole('button', { name: 'Close' }).click();
      await expect(staleChat.errorBanner).toBeHidden();

      await staleChat.previousVersionButton().click();
      await expect(staleChat.errorBanner).toContainText(BUSY);
      await expect(staleChat.versionLabel()).toHaveText('2 / 2');
      await expect(staleChat.messageText(staleFirst)).toHaveText('Draft a short email [[words:8]]');

      await chat.stopButton.click();
      await chat.waitForIdle();
      await stale.close();
    });
  });

  test('deleting the edit that made a version removes that version and shows the one before (B4)', async ({
    chat,
  }) => {
    const first = chat.userMessages.first();
    await chat.startThread('Name a colour [[words:8]]');
    await chat.waitForIdle();
    const originalReply = await chat.replyText(chat.lastReply());
    await chat.editMessage(first, 'Name a fruit [[words:8]]');
    await expect(chat.lastReply()).toContainText('You said: "Name a fruit"');
    await chat.waitForIdle();
    await expect(chat.versionLabel()).toHaveText('2 / 2');

    // Delete asks first; Cancel keeps the message.
    await first.hover();
    await chat.deleteButton(first).click();
    await chat.deleteDialog().getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect(chat.deleteDialog()).toBeHidden();
    await expect(chat.messageText(first)).toHaveText('Name a fruit [[words:8]]');

    await chat.deleteLatest();
    await expect(chat.messageText(first)).toHaveText('Name a colour [[words:8]]');
    await expect(chat.userMessages).toHaveCount(1);
    await expect(chat.assistantMessages).toHaveCount(1);
    await expect(chat.lastReplyText()).toHaveText(originalReply);
    await expect(chat.versionControls()).toHaveCount(0);

    await chat.reload();
    await expect(chat.messageText(first)).toHaveText('Name a colour [[words:8]]');
    await expect(chat.versionControls()).toHaveCount(0);
  });

  test('the inline editor: Escape and Cancel restore the message, Save needs text, Shift+Enter adds a line', async ({
    chat,
  }) => {
    const first = chat.userMessages.first();
    await chat.startThread('Keep me [[words:8]]');
    await chat.waitForIdle();

    let editor = await chat.startEditing(first);
    await expect(editor).toHaveValue('Keep me [[words:8]]');
    // The composer waits while a message is being edited.
    await expect(chat.composerInput).toBeDisabled();
    await editor.fill('changed');
    await editor.press('Escape');
    await expect(chat.messageEditor).toBeHidden();
    await expect(chat.messageText(first)).toHaveText('Keep me [[words:8]]');
    await expect(chat.editButton(first)).toBeFocused();
    await expect(chat.composerInput).toBeEnabled();

    editor = await chat.startEditing(first);
    await editor.fill('   ');
    const save = first.getByRole('button', { name: 'Save', exact: true });
    await expect(save).toBeDisabled();
    await editor.press('Enter');
    await expect(chat.messageEditor).toBeVisible();
    await editor.fill('two');
    await editor.press('Shift+Enter');
    await editor.pressSequentially('lines');
    await expect(editor).toHaveValue('two\nlines');
    await first.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect(chat.messageEditor).toBeHidden();
    await expect(chat.messageText(first)).toHaveText('Keep me [[words:8]]');
    await expect(chat.versionControls()).toHaveCount(0);
    await expect(chat.assistantMessages).toHaveCount(1);
  });

  test('another tab follows an edit, a switch and a delete (thread.changed)', async ({ chat, context }) => {
    const first = chat.userMessages.first();
    const url = await chat.startThread('Pick a film [[words:8]]');
    await chat.waitForIdle();

    const other = await context.newPage();
    const otherChat = new ChatPage(other);
    await other.goto(url);
    await otherChat.waitUntilReady();
    const otherFirst = otherChat.userMessages.first();
    await expect(otherChat.messageText(otherFirst)).toHaveText('Pick a film [[words:8]]');

    // While the new reply streams, the other tab already shows the new version only.
    await chat.editMessage(first, 'Pick a book [[words:300]] [[delay:50]]');
    await expect(otherChat.stopButton).toBeVisible();
    await expect(otherChat.lastReply()).toContainText('You said: "Pick a book"');
    await expect(otherChat.userMessages).toHaveCount(1);
    await expect(otherChat.messageText(otherFirst)).toHaveText('Pick a book [[words:300]] [[delay:50]]');
    await expect(otherChat.stopButton).toBeVisible();
    await expect(otherChat.repliesTo('Pick a film')).toHaveCount(0);
    await chat.waitForIdle();
    await otherChat.waitForIdle();
    await expect(otherChat.versionLabel()).toHaveText('2 / 2');

    await chat.previousVersion();
    await expect(otherChat.versionLabel()).toHaveText('1 / 2');
    await expect(otherChat.messageText(otherFirst)).toHaveText('Pick a film [[words:8]]');

    await chat.nextVersion();
    await chat.deleteLatest();
    await expect(otherChat.messageText(otherFirst)).toHaveText('Pick a film [[words:8]]');
    await expect(otherChat.versionControls()).toHaveCount(0);
    await other.close();
  });
});
