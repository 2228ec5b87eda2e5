import {
  CHAT_EXPORT_FORMAT,
  CHAT_EXPORT_VERSION,
  type ChatExport,
  type NewChatAnswer,
} from '@chat/contracts';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

/** Messages in the long chat: the size issue 13 names. */
const LONG_CHAT_MESSAGES = Number(process.env.E2E_LONG_CHAT_MESSAGES ?? 2000);

/**
 * A chat of `messages` messages, made in one request by importing an export of it (one
 * transaction; growing it through a thousand sends took minutes of the test run): user messages
 * `Message k [[words:3]] [[delay:0]]`, each answered by a three-word reply. Returns its address.
 */
async function importedLongChat(page: Page, messages: number, origin: string): Promise<string> {
  const start = Date.now() - messages * 60_000;
  const at = (index: number) => new Date(start + index * 60_000).toISOString();
  const exported: ChatExport = {
    format: CHAT_EXPORT_FORMAT,
    version: CHAT_EXPORT_VERSION,
    exportedAt: new Date().toISOString(),
    chat: { title: 'A long chat', createdAt: at(0) },
    shownVersion: 'v1',
    versions: [
      {
        id: 'v1',
        parent: null,
        editOf: null,
        lastShownAt: at(messages),
        messages: Array.from({ length: messages }, (_, index) => `m${index}`),
      },
    ],
    messages: Array.from({ length: messages }, (_, index) => {
      const turn = Math.floor(index / 2) + 1;
      const user = index % 2 === 0;
      return {
        id: `m${index}`,
        role: user ? 'user' : 'assistant',
        createdAt: at(index),
        parts: [
          { type: 'text', text: user ? `Message ${turn} [[words:3]] [[delay:0]]` : `Reply ${turn} here.` },
        ],
      };
    }),
    images: [],
    notes: [],
    approvals: [],
  };
  const response = await page.request.post('/api/imports', { headers: { origin }, data: exported });
  expect(response.status()).toBe(201);
  const { thread } = (await response.json()) as NewChatAnswer;
  return `/chat/${thread.id}`;
}

/** How far the transcript's scroll area is from its end, in pixels. */
function distanceFromBottom(page: Page): Promise<number> {
  return page.getByTestId('transcript').evaluate((transcript) => {
    let parent = transcript.parentElement;
    while (parent && !/auto|scroll/.test(getComputedStyle(parent).overflowY)) parent = parent.parentElement;
    const scroller = parent ?? document.documentElement;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
  });
}

/**
 * Starts recording, for every key typed from now on, the time from the key press to the next
 * frame painted after it (the browser's Event Timing entries: what INP measures).
 */
async function recordInputToPaint(page: Page): Promise<void> {
  await page.evaluate(() => {
    const durations: number[] = [];
    (window as unknown as { inputToPaint: number[] }).inputToPaint = durations;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.name === 'keydown') durations.push(entry.duration);
    }).observe({ type: 'event', durationThreshold: 16 } as PerformanceObserverInit);
  });
}

async function inputToPaint(page: Page): Promise<number[]> {
  return await page.evaluate(() => (window as unknown as { inputToPaint: number[] }).inputToPaint);
}

test.describe('a long chat', () => {
  test.setTimeout(600_000);

  test(`${LONG_CHAT_MESSAGES} messages: opens at its latest message every time, and typing keeps up with a streaming reply`, async ({
    chat,
    page,
    baseURL,
  }) => {
    await chat.openStartPage();
    const url = await importedLongChat(page, LONG_CHAT_MESSAGES, baseURL as string);

    await page.goto(url);
    // Thread detail of a long chat is the API's slowest read (see docs/benchmarks.md).
    await expect(chat.composerInput).toBeEnabled({ timeout: 60_000 });
    await expect(chat.userMessages.last()).toContainText(`Message ${LONG_CHAT_MESSAGES / 2} `, {
      timeout: 30_000,
    });
    // Opened at the bottom, on this visit and on every reload after it.
    for (let visit = 1; visit <= 5; visit++) {
      if (visit > 1) {
        await page.reload();
        await expect(chat.composerInput).toBeEnabled({ timeout: 60_000 });
        await expect(chat.userMessages.last()).toContainText(`Message ${LONG_CHAT_MESSAGES / 2} `);
      }
      await expect(chat.assistantMessages.last()).toBeInViewport();
      // Stays there once the page has settled (a late layout must not leave it mid-way).
      await page.waitForTimeout(1500);
      expect(await distanceFromBottom(page), `visit ${visit}`).toBeLessThan(50);
      await expect(chat.assistantMessages.last()).toBeInViewport();
    }

    // A long reply streams while the person types the next message.
    await chat.send('[[words:4000]] [[delay:20]] a long reply');
    await expect(chat.stopButton).toBeVisible();
    await expect(chat.lastReply()).toContainText('You said');
    await recordInputToPaint(page);
    const typed = 'typing while the reply streams stays instant';
    await chat.composerInput.pressSequentially(typed, { delay: 40 });
    await expect(chat.composerInput).toHaveValue(typed);
    await expect(chat.stopButton).toBeVisible();
    const slow = await inputToPaint(page);
    // Keys painted within 16 ms leave no entry: they count as 16 ms.
    const durations = [...slow, ...Array(Math.max(0, typed.length - slow.length)).fill(16)].sort(
      (a, b) => a - b,
    );
    const worst = durations.at(-1) ?? 0;
    const p90 = durations[Math.floor(durations.length * 0.9)] ?? 0;
    test.info().annotations.push({
      type: 'input-to-paint',
      description: `${typed.length} keys; ${slow.length} over 16 ms; p90 ${p90} ms; worst ${worst} ms`,
    });
    console.log(`input-to-paint: ${typed.length} keys, over 16 ms: ${JSON.stringify(slow)}`);
    // How fast keys paint is reported above, not judged: speed is the benchmarks' to measure, and
    // a bound here failed on a busy machine. What keeps typing fast is judged below: only a window
    // of the transcript is rendered (with all of it rendered, 44 keys could not be typed in 30 s).
    await chat.stopButton.click();
    await chat.waitForIdle();

    // Only the latest messages are rendered; scrolling up adds earlier ones above, and what was
    // in view stays in view.
    const rendered = await chat.userMessages.count();
    expect(rendered).toBeLessThan(LONG_CHAT_MESSAGES / 2);
    const top = chat.userMessages.first();
    const topText = (await chat.messageText(top).textContent()) ?? '';
    // Into the middle of the view, not to its edge: a message left at the very edge could leave
    // the view by a pixel of the anchoring and the test would fail on that alone.
    await top.evaluate((element) => element.scrollIntoView({ block: 'center' }));
    await expect.poll(() => chat.userMessages.count()).toBeGreaterThan(rendered);
    await expect(chat.userMessages.filter({ hasText: topText })).toBeInViewport();
    await expect(page.getByTestId('show-earlier')).toBeVisible();
  });
});
