import { expect, type Locator, type Page } from '@playwright/test';

/** The sign-in and sign-up forms, the account menu in the sidebar and the account settings page. */
export class AccountPages {
  readonly email: Locator;
  readonly password: Locator;
  readonly formError: Locator;
  readonly menuButton: Locator;
  readonly sessionList: Locator;

  constructor(readonly page: Page) {
    this.email = page.getByLabel('Email');
    this.password = page.getByLabel('Password');
    this.formError = page.getByTestId('auth-error');
    this.menuButton = page.getByTestId('account-menu');
    this.sessionList = page.getByTestId('session-list');
  }

  async open(path: '/sign-in' | '/sign-up'): Promise<void> {
    await this.page.goto(path);
    await expect(this.page.locator('html[data-hydrated="true"]')).toBeAttached();
  }

  async submit(path: '/sign-in' | '/sign-up', email: string, password: string): Promise<void> {
    await this.email.fill(email);
    await this.password.fill(password);
    const button = path === '/sign-up' ? 'Create account' : 'Sign in';
    await this.page.getByRole('button', { name: button, exact: true }).click();
  }

  /** Submits the form and waits until the app has loaded afresh on the chats. */
  async signInVia(path: '/sign-in' | '/sign-up', email: string, password: string): Promise<void> {
    await this.open(path);
    await this.submit(path, email, password);
    await this.page.waitForURL((url) => !url.pathname.startsWith('/sign-'));
    await expect(this.menuButton).toHaveAccessibleName(`Account menu: ${email}`);
  }

  async openMenu(): Promise<Locator> {
    await this.menuButton.click();
    const menu = this.page.getByRole('menu');
    await expect(menu).toBeVisible();
    return menu;
  }

  async signOut(): Promise<void> {
    const menu = await this.openMenu();
    await menu.getByRole('menuitem', { name: 'Sign out' }).click();
    await this.page.waitForURL(/\/sign-in$/);
  }
}
