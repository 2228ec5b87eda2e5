import { expect, test } from './fixtures';

test.describe('what the browser downloads', () => {
  test('built files go compressed; the start page loads no highlighting, a code block does', async ({
    chat,
    page,
  }) => {
    const scripts: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname);
    });
    await chat.openStartPage();
    await page.waitForLoadState('networkidle');
    const startPageScripts = [...scripts];
    expect(startPageScripts.length).toBeGreaterThan(0);

    // Precompressed on disk, chosen by Accept-Encoding.
    const entry = startPageScripts[0] as string;
    for (const encoding of ['br', 'gzip']) {
      const response = await page.request.fetch(entry, { headers: { 'accept-encoding': encoding } });
      expect(response.status()).toBe(200);
      expect(response.headers()['content-encoding'], encoding).toBe(encoding);
    }

    // A reply with a fenced TypeScript block: highlighting arrives then, in its own script.
    await chat.send('[[markdown]] [[delay:0]] some code');
    await page.waitForURL(/\/chat\//);
    const code = chat.lastReply().locator('[data-code-block] pre code');
    await expect(code.locator('[class^="hljs-"]').first()).toBeAttached();
    const loadedForCode = scripts.filter((path) => !startPageScripts.includes(path));
    expect(loadedForCode.length).toBeGreaterThan(0);
    // What the start page loaded cannot highlight: highlight.js was not among it.
    const startPageHighlights = await page.evaluate(async (paths) => {
      for (const path of paths) {
        const text = await (await fetch(path)).text();
        if (text.includes('highlightAuto')) return path;
      }
      return null;
    }, startPageScripts);
    expect(startPageHighlights).toBeNull();
  });
});
