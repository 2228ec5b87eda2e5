import { expect, test } from './fixtures';
import { AccountPages } from './pages/AccountPages';
import { OllamaServer } from './support/ollamaServer';
import { freePort, OwnServers } from './support/ownServers';

/**
 * A deployment set up its own way (its own API and web app): no model configured (only the
 * built-in demo model, as on a fresh install) and sign-up closed. The shared servers keep the
 * settings every other test relies on.
 */
test.describe('a fresh install with sign-up closed (AUTH_ALLOW_SIGNUP=false)', () => {
  let servers: OwnServers;

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    servers = await OwnServers.start({ AUTH_ALLOW_SIGNUP: 'false' });
  });

  test.afterAll(async () => {
    await servers?.stop();
  });

  test('offers no sign-up: not on the sign-in page, not in the guest menu, and the sign-up page says so', async ({
    page,
  }) => {
    const account = new AccountPages(page);
    await page.goto(`${servers.webOrigin}/`);
    await expect(page.locator('html[data-hydrated="true"]')).toBeAttached();
    await expect(account.menuButton).toHaveAccessibleName('Account menu: Guest');
    const menu = await account.openMenu();
    await expect(menu.getByRole('menuitem', { name: 'Sign in' })).toBeVisible();
    await expect(menu.getByRole('menuitem', { name: 'Create an account' })).toHaveCount(0);
    await page.keyboard.press('Escape');

    await page.goto(`${servers.webOrigin}/sign-in`);
    await expect(page.getByRole('button', { name: 'Sign in', exact: true })).toBeVisible();
    await expect(page.getByRole('link', { name: 'Back to your chats' })).toBeVisible();
    await expect(page.getByRole('link', { name: 'Create an account' })).toHaveCount(0);

    await page.goto(`${servers.webOrigin}/sign-up`);
    await expect(page.getByTestId('sign-up-closed')).toHaveText(
      'This server does not take new accounts. Sign in with an existing one.',
    );
    await expect(page.getByRole('button', { name: 'Create account' })).toHaveCount(0);
    await expect(page.getByRole('link', { name: 'Sign in' })).toBeVisible();
  });

  test('says on the start page, in one line, that the demo model is scripted, and links to how to connect a real one', async ({
    page,
  }, testInfo) => {
    await page.goto(`${servers.webOrigin}/`);
    const notice = page.getByTestId('demo-model-notice');
    await expect(notice).toHaveText('Scripted demo replies, not an AI. Connect a real model');
    // One line, on a phone too (the screenshots are kept with the run's results, to look at).
    for (const size of [
      { width: 1440, height: 900 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size);
      const box = await notice.boundingBox();
      const lineHeight = await notice.evaluate((element) =>
        Number.parseFloat(getComputedStyle(element).lineHeight),
      );
      expect(box?.height ?? 0).toBeLessThan(1.5 * lineHeight);
      await page.screenshot({ path: testInfo.outputPath(`demo-notice-${size.width}x${size.height}.png`) });
    }

    await notice.getByRole('link', { name: 'Connect a real model' }).click();
    await expect(page).toHaveURL(/\/help\/models$/);
    const help = page.getByTestId('help-models');
    await expect(help.getByRole('heading', { name: 'A real model' })).toBeVisible();
    await expect(help).toContainText('CHAT_MODEL=openai:llama3.1 OPENAI_BASE_URL=http://127.0.0.1:11434/v1');
    await expect(help.getByRole('heading', { name: 'Several models' })).toBeVisible();
  });
});

test.describe('a fresh install on a machine where Ollama runs (M5)', () => {
  let ollama: OllamaServer;
  let servers: OwnServers;

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    ollama = await OllamaServer.start(['llama3.2:latest']);
    servers = await OwnServers.start({ OLLAMA_BASE_URL: ollama.origin });
  });

  test.afterAll(async () => {
    await servers?.stop();
    await ollama?.stop();
  });

  test("offers Ollama's models beside the demo model with nothing configured, and no longer says only the demo model answers", async ({
    chat,
    page,
  }) => {
    await page.goto(`${servers.webOrigin}/`);
    await chat.waitUntilReady();
    await chat.send('first question [[words:4]]');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await chat.waitForIdle();
    // The demo model stays the default: a found model is an offer, not a surprise.
    await expect(chat.lastReply().getByTestId('message-model')).toHaveText('· Demo model (scripted replies)');

    const picker = page.getByTestId('model-picker');
    await picker.click();
    await page.getByRole('option', { name: 'llama3.2:latest (Ollama)' }).click();
    await expect(picker).toContainText('llama3.2:latest (Ollama)');
    await chat.send('and you?');
    await expect(chat.lastReplyText()).toHaveText('Hello from llama3.2:latest.');
    await expect(chat.lastReply().getByTestId('message-model')).toHaveText('· llama3.2:latest (Ollama)');

    // The start page, once it has the list: Ollama's model is offered, so no demo-only line.
    const listed = page.waitForResponse((response) => response.url().endsWith('/api/models'));
    await page.goto(`${servers.webOrigin}/`);
    await chat.waitUntilReady();
    await listed;
    await expect(page.getByTestId('demo-model-notice')).toHaveCount(0);
  });
});

test.describe('a model server that does not answer (M5)', () => {
  let servers: OwnServers;

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    // A free loopback port: nothing answers there.
    const nobody = await freePort();
    servers = await OwnServers.start({
      CHAT_MODELS: `local,compatible:*@http://127.0.0.1:${nobody}/v1;id=lab;label=Lab`,
    });
  });

  test.afterAll(async () => {
    await servers?.stop();
  });

  test('never stops the start, and the picker shows it as not answering without offering it', async ({
    chat,
    page,
  }) => {
    await page.goto(`${servers.webOrigin}/`);
    await chat.waitUntilReady();
    await chat.send('hello [[words:3]]');
    await page.waitForURL(/\/chat\/[^/]+$/);
    await chat.waitForIdle();
    await page.getByTestId('model-picker').click();
    const down = page.getByRole('option', { name: 'Lab (not answering)' });
    await expect(down).toBeVisible();
    await expect(down).toHaveAttribute('aria-disabled', 'true');
    await expect(page.getByRole('option', { name: 'Demo model (scripted replies)' })).not.toHaveAttribute(
      'aria-disabled',
      'true',
    );
  });
});
