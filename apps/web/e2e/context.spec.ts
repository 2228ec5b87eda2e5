import { expect, test } from './fixtures';

/**
 * The context meter (C2), Compact now and the marker it leaves (C3), and a reply's usage (C1), on
 * the local model's 8,000-token window: long replies fill it in a few turns.
 */
test.describe('the model context', () => {
  test('the meter rises and turns amber; Compact now leaves a marker that expands to its summary', async ({
    chat,
    page,
  }) => {
    const meter = page.getByTestId('context-meter');
    const percent = page.getByTestId('context-meter-percent');
    const percentOf = async () => Number((await percent.textContent())?.match(/(\d+)%/)?.[1] ?? -1);

    await chat.startThread('first question [[words:900]] [[delay:0]]');
    await chat.waitForIdle();
    await expect(meter).toHaveAttribute('data-level', 'ok');
    await expect.poll(percentOf).toBeGreaterThan(0);
    const first = await percentOf();

    // A reply's usage is in its info, as the model reported it.
    await expect(page.getByTestId('message-usage').last()).toHaveText(/· [\d,]+ in \/ [\d,]+ out tokens/);

    // Long replies fill the window: the meter rises, and turns amber near the limit.
    for (let turn = 2; turn <= 6 && (await meter.getAttribute('data-level')) !== 'warn'; turn++) {
      await chat.send(`question ${turn} [[words:900]] [[delay:0]]`);
      await chat.waitForIdle();
      await expect.poll(percentOf).toBeGreaterThan(first);
    }
    await expect(meter).toHaveAttribute('data-level', 'warn');
    expect(await percentOf()).toBeGreaterThanOrEqual(60);

    await page.getByTestId('compact-now').click();
    const marker = page.getByTestId('context-marker');
    await expect(marker).toHaveAttribute('data-kind', 'summary');
    await expect(marker).toContainText('Earlier messages summarized for the model');
    // The marker is a row of the transcript of its own, not a part of the message below it.
    await expect(chat.transcript.locator(':scope > [data-testid="context-marker"]')).toHaveCount(1);
    await expect(chat.transcript.locator('article [data-testid="context-marker"]')).toHaveCount(0);
    await expect(meter).toHaveAttribute('data-level', 'ok');
    // Every message is still in the transcript.
    await expect(chat.userMessages.first()).toContainText('first question');

    await page.getByTestId('context-marker-toggle').click();
    await expect(page.getByTestId('context-marker-summary')).toContainText('Summary of');
    await expect(page.getByTestId('context-marker-summary')).toContainText('"first question"');

    // After a reload the marker is where it was.
    await chat.reload();
    await expect(page.getByTestId('context-marker')).toHaveAttribute('data-kind', 'summary');
  });
});
