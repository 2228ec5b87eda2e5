import { expect, test } from './fixtures';
import { AccountPages } from './pages/AccountPages';
import { ChatPage } from './pages/ChatPage';
import { Sidebar, threadIdOf } from './pages/Sidebar';

const PASSWORD = 'correct horse battery';
const newEmail = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.test`;

test.describe('accounts', () => {
  test('a guest signs up and keeps the chat; signs out, and signs in again elsewhere to find it', async ({
    page,
    chat,
    sidebar,
    browser,
  }) => {
    const account = new AccountPages(page);
    const threadId = threadIdOf(await chat.startThread('remember me [[words:4]]'));
    await chat.waitForIdle();
    await expect(account.menuButton).toHaveAccessibleName('Account menu: Guest');

    const email = newEmail('keeper');
    await account.open('/sign-up');
    await expect(page.getByText('Your chats as a guest move to your new account.')).toBeVisible();
    await account.submit('/sign-up', email, PASSWORD);
    await page.waitForURL((url) => url.pathname === '/');
    await expect(account.menuButton).toHaveAccessibleName(`Account menu: ${email}`);
    await expect(sidebar.link(threadId)).toHaveText('remember me');

    await page.reload();
    await expect(sidebar.link(threadId)).toHaveText('remember me');
    await sidebar.link(threadId).click();
    await expect(chat.assistantMessages).toHaveCount(1);

    await account.signOut();
    // Signed out on the server: the old chat is not reachable any more from this browser.
    const answer = await page.request.get(`/api/threads/${threadId}`);
    expect(answer.status()).toBe(401);

    // A fresh browser (another device) signs in and finds the chat.
    const context = await browser.newContext();
    try {
      const other = await context.newPage();
      const otherAccount = new AccountPages(other);
      await otherAccount.signInVia('/sign-in', email, PASSWORD);
      const otherSidebar = new Sidebar(other);
      await expect(otherSidebar.link(threadId)).toHaveText('remember me');
      await otherSidebar.link(threadId).click();
      const otherChat = new ChatPage(other);
      await expect(otherChat.userMessages.first()).toContainText('remember me');
    } finally {
      await context.close();
    }
  });

  test('signing up from a chat comes back to that chat, and a reply streaming meanwhile is not cut off', async ({
    page,
    chat,
  }) => {
    const account = new AccountPages(page);
    const threadId = threadIdOf(await chat.startThread('a long answer [[words:600]] [[delay:40]]'));
    await expect(chat.lastReply()).toContainText('You said: "a long answer"');

    const menu = await account.openMenu();
    await menu.getByRole('menuitem', { name: 'Create an account' }).click();
    await page.waitForURL(/\/sign-up\?/);
    const email = newEmail('midreply');
    await account.submit('/sign-up', email, PASSWORD);

    // Back in the same chat, as the account, and the reply is still streaming there.
    await page.waitForURL((url) => url.pathname === `/chat/${threadId}`);
    await expect(account.menuButton).toHaveAccessibleName(`Account menu: ${email}`);
    await expect(chat.stopButton).toBeVisible();
    const reply = chat.lastReply();
    const partial = await chat.replyText(reply);
    await expect.poll(async () => (await chat.replyText(reply)).length).toBeGreaterThan(partial.length);

    // It ends as a whole reply, never marked interrupted.
    await chat.waitForIdle(60_000);
    await expect(chat.interruptedBadge(reply)).toHaveCount(0);
    expect((await chat.replyText(reply)).split(/\s+/)).toHaveLength(600);
  });

  test('the sign-in and sign-up forms explain what is wrong', async ({ page }) => {
    const account = new AccountPages(page);
    const email = newEmail('forms');

    // Checked in the browser before sending: malformed email, short password.
    await account.open('/sign-up');
    await account.submit('/sign-up', 'not-an-email', 'short');
    await expect(page.getByText('Enter a valid email address')).toBeVisible();
    await expect(page.getByText('Use at least 8 characters')).toBeVisible();
    await expect(page).toHaveURL(/\/sign-up$/);

    // An account, then a second sign-up with its email: the field says it is taken.
    await account.signInVia('/sign-up', email, PASSWORD);
    await account.signOut();
    await account.open('/sign-up');
    await account.submit('/sign-up', email, PASSWORD);
    await expect(page.getByText('An account with this email already exists. Sign in instead.')).toBeVisible();

    // Wrong password and unknown email: the same words, no hint which.
    await account.open('/sign-in');
    await account.submit('/sign-in', email, 'not the password');
    await expect(account.formError).toHaveText('Wrong email or password.');
    await account.submit('/sign-in', newEmail('nobody'), PASSWORD);
    await expect(account.formError).toHaveText('Wrong email or password.');
    await expect(page).toHaveURL(/\/sign-in$/);
  });

  test('the account page lists sessions, signs out the others and deletes the account', async ({
    page,
    browser,
    chat,
  }) => {
    const account = new AccountPages(page);
    const email = newEmail('leaver');
    await account.signInVia('/sign-up', email, PASSWORD);
    await chat.startThread('to be deleted [[words:3]]');
    await chat.waitForIdle();

    const context = await browser.newContext();
    try {
      const other = await context.newPage();
      await new AccountPages(other).signInVia('/sign-in', email, PASSWORD);

      const menu = await account.openMenu();
      await menu.getByRole('menuitem', { name: 'Account settings' }).click();
      await expect(page).toHaveURL(/\/settings\/account$/);
      await expect(page.getByText(`As ${email}`)).toBeVisible();
      await expect(account.sessionList.locator('li')).toHaveCount(2);
      await expect(account.sessionList.getByText('This device')).toHaveCount(1);
      await expect(account.sessionList).toContainText('Chrome on Linux');

      await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
      await expect(account.sessionList.locator('li')).toHaveCount(1);
      expect((await other.request.get('/api/threads')).status()).toBe(401);
    } finally {
      await context.close();
    }

    await page.getByRole('button', { name: 'Delete account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toBeHidden();
    await page.getByRole('button', { name: 'Delete account' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete everything' }).click();
    await page.waitForURL(/\/sign-in\?deleted=1$/);
    await expect(page.getByTestId('account-deleted')).toHaveText(
      'Your account and all its chats were deleted.',
    );
    await account.submit('/sign-in', email, PASSWORD);
    await expect(account.formError).toHaveText('Wrong email or password.');
  });
});
