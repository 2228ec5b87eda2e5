import { test as base, expect, type Page } from '@playwright/test';
import { ChatPage } from './pages/ChatPage';
import { QueueDock } from './pages/QueueDock';
import { Sidebar } from './pages/Sidebar';

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function isForeign(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol !== 'http:' && protocol !== 'https:' && protocol !== 'ws:' && protocol !== 'wss:')
    return false;
  return !LOCAL_HOSTS.has(hostname);
}

export interface Fixtures {
  chat: ChatPage;
  dock: QueueDock;
  sidebar: Sidebar;
  /** Dialogs (alert, confirm) the page opened: an injected script would show up here. */
  dialogs: string[];
}

/**
 * Every test: the app must work offline, so any request to another host is blocked and
 * fails the test; no page may open a dialog (an injected script would), so one fails it too.
 */
export const test = base.extend<Fixtures & { offlineGuard: undefined; browserErrors: undefined }>({
  /** A failed test shows what the browser reported as errors (uncaught, or logged by Vue). */
  browserErrors: [
    async ({ context }, use, testInfo) => {
      const errors: string[] = [];
      const watch = (page: Page) => {
        page.on('pageerror', (error) => errors.push(`uncaught: ${error.stack ?? error.message}`));
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(`console: ${message.text()}`);
        });
      };
      context.pages().forEach(watch);
      context.on('page', watch);
      await use(undefined);
      if (testInfo.status !== testInfo.expectedStatus && errors.length > 0)
        await testInfo.attach('browser errors', { body: errors.join('\n'), contentType: 'text/plain' });
    },
    { auto: true },
  ],
  offlineGuard: [
    async ({ context }, use) => {
      const foreign: string[] = [];
      await context.route(
        (url) => isForeign(url.toString()),
        async (route) => {
          foreign.push(route.request().url());
          await route.abort('blockedbyclient');
        },
      );
      await use(undefined);
      expect(foreign, 'requests to hosts other than 127.0.0.1/localhost').toEqual([]);
    },
    { auto: true },
  ],
  dialogs: [
    async ({ context }, use) => {
      const opened: string[] = [];
      context.on('dialog', (dialog) => {
        opened.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
      });
      await use(opened);
      expect(opened, 'dialogs opened by the page').toEqual([]);
    },
    { auto: true },
  ],
  chat: async ({ page }, use) => {
    await use(new ChatPage(page));
  },
  dock: async ({ page }, use) => {
    await use(new QueueDock(page));
  },
  sidebar: async ({ page }, use) => {
    await use(new Sidebar(page));
  },
});

export { expect };
