import { mkdirSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import type { ThreadDetail } from '@chat/contracts';
import type { Locator, Page } from '@playwright/test';
import { expect, test } from './fixtures';
import type { ChatPage } from './pages/ChatPage';
import { pdfBytes } from './support/documents';

/**
 * A document on a model with a small window (D1, issue 41): the composer says before sending
 * which part will be read, the meter counts it, and the model's input stays within its window.
 * `Small window` is the built-in model with a 2,000-token window (playwright.config.ts).
 * DOCWINDOW_SHOTS=<dir> also keeps screenshots of the warning, light and dark.
 */
const SMALL_WINDOW = 2_000;
const shots = process.env.DOCWINDOW_SHOTS;

/** 60 pages of six lines of ten words: far more than the small model's window holds. */
const longReport = pdfBytes(
  Array.from({ length: 60 }, (_, page) =>
    Array.from(
      { length: 6 },
      (_, line) =>
        `Page ${page + 1} line ${line + 1} ${Array.from({ length: 6 }, (_, word) => `w${word}`).join(' ')}`,
    ).join('\n'),
  ),
);

async function meterPercent(page: Page): Promise<number> {
  const text = (await page.getByTestId('context-meter-percent').textContent()) ?? '';
  return Number(/(\d+)%/.exec(text)?.[1]);
}

/** The control is wholly within the screen's width. */
async function expectWithinScreen(control: Locator, page: Page): Promise<void> {
  const box = await control.boundingBox();
  if (!box) throw new Error('no box');
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(page.viewportSize()?.width ?? 0);
}

async function pickSmallModel(chat: ChatPage, page: Page): Promise<void> {
  const picker = page.getByTestId('model-picker');
  await picker.click();
  await page.getByRole('option', { name: 'Small window' }).click();
  await expect(picker).toContainText('Small window');
  // The meter is read again for the model picked: its window is 2,000 tokens.
  await expect(page.getByTestId('context-meter').getByRole('meter')).toHaveAttribute(
    'aria-label',
    /of 2,000 tokens/,
  );
  await expect(chat.composerInput).toBeEnabled();
}

for (const [name, viewport] of [
  ['desktop', { width: 1440, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const) {
  test.describe(`a document on a small-window model (${name})`, () => {
    test.use({ viewport });

    test('is warned before sending, counted by the meter, and read only as far as the window holds', async ({
      chat,
      page,
    }) => {
      const url = await chat.startThread('hello [[words:3]]');
      await chat.waitForIdle();
      await pickSmallModel(chat, page);
      const before = await meterPercent(page);
      const warning = page.getByTestId('document-read-warning');
      await expect(warning).toHaveCount(0);

      await page
        .getByTestId('attach-input')
        .setInputFiles([{ name: 'report.pdf', mimeType: 'application/pdf', buffer: longReport }]);
      await expect(chat.composer.getByTestId('attachment-thumb')).toHaveAttribute('data-state', 'ready');

      // Before sending: which pages the model will read, in words, and the meter counts them.
      await expect(warning).toHaveText(
        /^Only about pages 1-\d+ of 60 of report\.pdf will be read by Small window\.$/,
      );
      await expect(warning).toBeVisible();
      await expectWithinScreen(warning, page);
      await expect.poll(() => meterPercent(page)).toBeGreaterThan(before + 20);

      // Readable in both themes: no serious axe violation in the warning or the meter.
      if (shots) mkdirSync(shots, { recursive: true });
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        const results = await new AxeBuilder({ page })
          .include('[data-testid="document-read-warnings"]')
          .include('[data-testid="context-meter"]')
          .withTags(['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'])
          .analyze();
        const serious = results.violations.filter((violation) => violation.impact !== 'minor');
        expect(serious.map((violation) => violation.id)).toEqual([]);
        if (shots)
          await page.screenshot({
            path: `${shots}/${name}-${viewport.width}x${viewport.height}-${colorScheme}.png`,
          });
      }
      await page.emulateMedia({ colorScheme: 'light' });

      const warned = Number(/pages 1-(\d+)/.exec((await warning.textContent()) ?? '')?.[1]);
      await chat.send('what does the report say? [[words:40]]');
      await expect(warning).toHaveCount(0);
      const reply = chat.lastReply();
      await expect(reply).toContainText(/pages 1-\d+ of 60 were read/, { timeout: 30_000 });
      await chat.waitForIdle();
      // The chip says what was read, about as the warning said (the page estimates tokens by words).
      const cut = chat.userMessages.last().getByTestId('document-cut');
      await expect(cut).toHaveText(/^Pages 1-\d+ of 60 were read$/);
      const read = Number(/Pages 1-(\d+)/.exec((await cut.textContent()) ?? '')?.[1]);
      expect(read).toBeGreaterThanOrEqual(warned);
      expect(read).toBeLessThan(60);

      // The model's input stayed within its window, as the reply's recorded usage says.
      const threadId = new URL(url).pathname.split('/').at(-1);
      const answer = await page.request.get(`/api/threads/${threadId}`);
      expect(answer.status()).toBe(200);
      const detail = (await answer.json()) as ThreadDetail;
      const last = detail.messages.filter((message) => message.role === 'assistant').at(-1);
      expect(last?.metadata.model).toBe('local-small');
      expect(last?.metadata.usage?.inputTokens).toBeGreaterThan(0);
      expect(last?.metadata.usage?.inputTokens).toBeLessThanOrEqual(SMALL_WINDOW);
    });
  });
}
