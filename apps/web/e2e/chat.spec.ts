import { expect, test } from './fixtures';
import { recordAnnouncements } from './support/announcements';

test.describe('chat', () => {
  test('streams a reply as it is written, and the transcript survives a reload', async ({ chat }) => {
    await chat.startThread('[[words:300]] [[delay:40]] hello');
    const reply = chat.lastReply();

    // Partial text is on screen while the reply is still being written (Stop is showing).
    await expect(reply).toContainText('You said: "hello"');
    await expect(chat.stopButton).toBeVisible();
    const partial = await chat.replyText(reply);
    await expect.poll(async () => (await chat.replyText(reply)).length).toBeGreaterThan(partial.length);
    await expect(chat.stopButton).toBeVisible();

    await chat.waitForIdle();
    const full = await chat.replyText(reply);
    expect(full.length).toBeGreaterThan(partial.length);

    await chat.reload();
    await expect(chat.userMessages).toHaveCount(1);
    await expect(chat.userMessages.first()).toContainText('[[words:300]] [[delay:40]] hello');
    await expect(chat.assistantMessages).toHaveCount(1);
    expect(await chat.replyText(chat.lastReply())).toBe(full);
  });

  test('the transcript grows between the page scrolling and hearing of it: it stays at the latest message', async ({
    chat,
    page,
  }) => {
    await chat.startThread('[[words:300]] [[delay:5]] a long story');
    await chat.waitForIdle();
    const back = page.getByTestId('scroll-to-latest');
    await expect(back).toBeHidden();
    // A busy machine: the pane grows by more than the page's margin after the page scrolled to
    // the bottom and before it hears that scroll's event. Nobody scrolled up.
    await chat.transcript.evaluate((element) => {
      let pane: HTMLElement | null = element.parentElement;
      while (pane && !/auto|scroll/.test(getComputedStyle(pane).overflowY)) pane = pane.parentElement;
      if (!pane) throw new Error('no scroll pane');
      const spacer = document.createElement('div');
      spacer.style.height = '200px';
      spacer.style.flexShrink = '0';
      spacer.dataset.testid = 'late-growth';
      pane.append(spacer);
      pane.dispatchEvent(new Event('scroll'));
    });
    await page.waitForTimeout(300);
    await expect(back).toBeHidden();
    await page.getByTestId('late-growth').evaluate((spacer) => spacer.remove());
    // The next thing to change size (here the Interrupted badge after Stop) is followed.
    await chat.send('[[words:400]] [[delay:25]] another');
    await expect.poll(async () => (await chat.replyText(chat.lastReply())).length).toBeGreaterThan(300);
    await chat.stopButton.click();
    await expect(chat.interruptedBadge(chat.lastReply())).toBeInViewport({ ratio: 1 });
    await expect(back).toBeHidden();
  });

  test('the live region reads the first sentence of a finished reply, never each word', async ({
    chat,
    page,
  }) => {
    const announcements = await recordAnnouncements(page);
    await chat.startThread('[[words:40]] [[delay:20]] good morning');
    await chat.waitForIdle();
    // One announcement of the reply, once it finished: its first sentence, never the words as they came.
    await expect.poll(announcements).toContain('Reply finished: You said: "good morning".');
    expect((await announcements()).filter((text) => text.includes('You said'))).toEqual([
      'Reply finished: You said: "good morning".',
    ]);
  });

  test('shows raw HTML in messages as text and never runs it', async ({ chat }) => {
    const payload = '<script>alert(1)</script> and <img src=x onerror=alert(1)>';
    await chat.startThread(payload);

    await expect(chat.userMessages.first()).toContainText(payload);
    await expect(chat.lastReply()).toContainText('<img src=x onerror=alert(1)>');
    await chat.waitForIdle();
    await expect(chat.lastReply()).toContainText('<script>alert(1)</script>');

    await expect(chat.transcript.locator('img, script')).toHaveCount(0);
    // Nothing in the transcript can run later either: no element carries an inline handler
    // (onerror, onload, ...). The dialogs fixture fails the test if anything opened one.
    const inlineHandlers = await chat.transcript.evaluate((root) =>
      [root, ...Array.from(root.querySelectorAll('*'))].flatMap((element) =>
        Array.from(element.attributes)
          .filter((attribute) => attribute.name.startsWith('on'))
          .map((attribute) => `${element.tagName.toLowerCase()}[${attribute.name}]`),
      ),
    );
    expect(inlineHandlers).toEqual([]);
  });

  test('switching threads in the sidebar shows each thread its own transcript', async ({ chat, page }) => {
    const firstUrl = await chat.startThread('[[words:5]] first thread');
    await chat.waitForIdle();
    const secondUrl = await chat.startThread('[[words:5]] second thread');
    await chat.waitForIdle();

    const sidebar = page.getByRole('navigation', { name: 'Chats' });
    await sidebar.locator(`a[href="${new URL(firstUrl).pathname}"]`).click();
    await expect(page).toHaveURL(firstUrl);
    await expect(chat.userMessages).toHaveCount(1);
    await expect(chat.userMessages.first()).toContainText('first thread');

    await sidebar.locator(`a[href="${new URL(secondUrl).pathname}"]`).click();
    await expect(page).toHaveURL(secondUrl);
    await expect(chat.userMessages).toHaveCount(1);
    await expect(chat.userMessages.first()).toContainText('second thread');
  });

  test('the sidebar lists the new thread and marks it active', async ({ chat, page }) => {
    const url = await chat.startThread('[[words:5]] sidebar check');
    const threadPath = new URL(url).pathname;
    const link = page.getByRole('navigation', { name: 'Chats' }).locator(`a[href="${threadPath}"]`);
    await expect(link).toBeVisible();
    await expect(link).toHaveAttribute('aria-current', 'page');
  });
});
