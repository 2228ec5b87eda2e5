import { expect, test } from './fixtures';

test.describe('regenerate the latest reply (issue 14)', () => {
  test('makes a new version of the question with a fresh reply; the earlier reply is one switch away, also after a reload', async ({
    chat,
    page,
  }) => {
    await chat.startThread('first question [[words:4]]');
    await chat.waitForIdle();
    await chat.send('second question [[words:6]]');
    await expect(chat.repliesTo('second question')).toHaveCount(1);
    await chat.waitForIdle();
    const regenerate = chat.transcript.getByRole('button', { name: 'Regenerate reply' });
    // Only the latest reply offers it.
    await expect(regenerate).toHaveCount(1);
    await expect(chat.lastReply().getByRole('button', { name: 'Regenerate reply' })).toBeVisible();
    const firstReply = await chat.replyText(chat.lastReply());

    await regenerate.click();
    // While the new reply streams, nothing offers to regenerate; then the latest one does.
    await chat.waitForIdle();
    await expect(chat.userMessages).toHaveCount(2);
    await expect(chat.assistantMessages).toHaveCount(2);
    const asked = chat.userMessages.last();
    await expect(chat.messageText(asked)).toHaveText('second question [[words:6]]');
    await expect(chat.versionLabel(asked)).toHaveText('2 / 2');
    await expect(chat.lastReply()).toContainText('You said: "second question"');
    await expect(regenerate).toHaveCount(1);
    // The earlier exchange is untouched.
    await expect(chat.versionControls(chat.userMessages.first())).toHaveCount(0);

    await chat.reload();
    await expect(chat.versionLabel(chat.userMessages.last())).toHaveText('2 / 2');
    await chat.previousVersion(chat.userMessages.last());
    await expect(chat.lastReplyText()).toHaveText(firstReply);
    await expect(page.getByTestId('error-banner')).toHaveCount(0);
  });

  test('waits, and says why, while the queue holds a message', async ({ chat, dock }) => {
    await chat.startThread('[[words:3000]] [[delay:30]] a long one');
    await chat.send('queued [[words:3]]');
    await dock.expectTexts(['queued [[words:3]]']);
    await dock.root.getByRole('button', { name: 'Pause the queue' }).click();
    await expect(dock.root.getByTestId('queue-status')).toContainText('paused');
    await chat.stopButton.click();
    await chat.waitForIdle();

    const regenerate = chat.lastReply().getByRole('button', { name: 'Regenerate reply' });
    await expect(regenerate).toBeDisabled();
    // The tooltip (and its copy for screen readers) says why; hovered afresh until it opens.
    const reason = chat.page.getByText('Send or delete the queued messages before editing a message.');
    await expect(async () => {
      await chat.page.mouse.move(0, 0);
      await regenerate.locator('..').hover();
      await expect(reason.first()).toBeVisible({ timeout: 2_000 });
    }).toPass({ timeout: 20_000 });
    await dock.expectTexts(['queued [[words:3]]']);
  });
});
