import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from './fixtures';

declare global {
  interface Window {
    cspViolations?: string[];
  }
}

test.describe('security headers', () => {
  test('the page carries a strict CSP and the app works under it with no violation', async ({
    page,
    chat,
  }) => {
    await page.addInitScript(() => {
      window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (event) => {
        window.cspViolations?.push(
          `${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}:${event.columnNumber}`,
        );
      });
    });
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });

    const response = await page.goto('/');
    const headers = response?.headers() ?? {};
    const policy = headers['content-security-policy'] ?? '';
    const scriptSources = /script-src ([^;]*)/.exec(policy)?.[1] ?? '';
    expect(scriptSources).toContain("'self'");
    expect(scriptSources).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(headers['x-powered-by']).toBeUndefined();

    await chat.waitUntilReady();
    await chat.startThread('[[words:12]] hello under a strict policy');
    await chat.waitForIdle();
    await expect(chat.lastReply()).toContainText('You said: "');

    expect(await page.evaluate(() => window.cspViolations)).toEqual([]);
    expect(consoleErrors.filter((text) => /Content Security Policy|Refused to/i.test(text))).toEqual([]);
  });

  test('refuses to be shown inside a page of another origin', async ({ page, baseURL }) => {
    // Another origin (another port) that frames the app, as a page of any site could.
    const framer = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><title>framer</title><iframe src="${baseURL}/" width="800" height="600"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = framer.address() as AddressInfo;
      await page.goto(`http://127.0.0.1:${port}/`);
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
      expect(frame).toBeDefined();
      // Chromium replaces a frame refused by frame-ancestors with its error page.
      await expect.poll(() => frame?.url(), { timeout: 10_000 }).toBe('chrome-error://chromewebdata/');
      // The app never ran inside: no hydrated document, no composer.
      expect(await frame?.locator('html[data-hydrated="true"]').count()).toBe(0);
      expect(await frame?.locator('textarea').count()).toBe(0);
    } finally {
      framer.close();
    }
  });
});
