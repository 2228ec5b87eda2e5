import type { Page } from '@playwright/test';

/**
 * Records every text the page's polite live region takes, in order, from before the page loads.
 * The region holds one text at a time and the next announcement replaces it (a reply's end and
 * "Queue is empty." come within milliseconds), so a test that polls the region can miss one that a
 * screen reader, which queues each change, would read.
 */
export async function recordAnnouncements(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const heard: string[] = [];
    (window as unknown as { __announcements: string[] }).__announcements = heard;
    const read = () => {
      for (const region of Array.from(document.querySelectorAll('.nuxt-announcer [aria-live="polite"]'))) {
        const text = region.textContent?.trim() ?? '';
        if (text && heard.at(-1) !== text) heard.push(text);
      }
    };
    new MutationObserver(read).observe(document, { subtree: true, childList: true, characterData: true });
  });
  return async () =>
    page.evaluate(() => (window as unknown as { __announcements: string[] }).__announcements);
}
