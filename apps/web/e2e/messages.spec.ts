import { turnErrorMessages } from '@chat/contracts';
import { expect, test } from './fixtures';

test.describe('message actions', () => {
  test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

  test('every message has Copy (as Markdown) and its time on hover; replies name their model', async ({
    chat,
    page,
  }) => {
    await chat.startThread('[[words:8]] copy me');
    await chat.waitForIdle();
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

    const question = chat.userMessages.first();
    await question.hover();
    await question.getByRole('button', { name: 'Copy message' }).click();
    await expect.poll(clipboard).toBe('[[words:8]] copy me');
    await expect(question.getByTestId('message-time')).toBeVisible();
    await expect(question.getByTestId('message-time')).toHaveAttribute('datetime', /^\d{4}-\d\d-\d\dT/);

    const reply = chat.lastReply();
    await reply.hover();
    await reply.getByRole('button', { name: 'Copy reply' }).click();
    await expect.poll(clipboard).toBe(await chat.replyText(reply));
    await expect(reply.getByTestId('message-time')).toBeVisible();
    await expect(reply.getByTestId('message-model')).toContainText('Demo model (scripted replies)');
  });

  test('code blocks have a header with the language and a Copy button', async ({ chat, page }) => {
    await chat.startThread('[[markdown]] show me');
    await chat.waitForIdle();
    const reply = chat.lastReply();

    // What the renderer can do, from the local model alone.
    await expect(reply.locator('h2, h3').first()).toBeVisible();
    await expect(reply.locator('ul li, ol li').first()).toBeVisible();
    await expect(reply.locator('table th').first()).toBeVisible();
    await expect(reply.locator('a[href^="https://"]')).toHaveCount(1);
    await expect(reply.locator(':not(pre) > code').first()).toBeVisible();

    const block = reply.locator('[data-code-block]').first();
    await expect(block.locator('.code-block-header')).toContainText('ts');
    const code = (await block.locator('pre code').textContent()) ?? '';
    expect(code).toContain('function');
    await block.getByRole('button', { name: 'Copy code' }).click();
    await expect(block.getByRole('button', { name: 'Copy code' })).toHaveText('Copied');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(code);
  });

  test('a reply that failed part-way is marked failed with its error, also after a reload', async ({
    chat,
    dock,
  }) => {
    await chat.startThread('[[words:30]] [[fail-after:5]] break');
    await chat.waitForIdle();
    await chat.reload();
    const reply = chat.repliesTo('break');
    // Marked in the transcript; its error and its actions once, on the Dock's failed head (Q11).
    await expect(chat.failedNote(reply)).toBeVisible();
    await expect(dock.headError()).toContainText(turnErrorMessages.modelFailed);
    await expect(reply.getByRole('button', { name: 'Regenerate reply' })).toHaveCount(0);
  });
});
