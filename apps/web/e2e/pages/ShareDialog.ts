import { expect, type Locator, type Page } from '@playwright/test';

/** The chat header's Share button and its dialog: make a link, copy it, list and revoke links. */
export class ShareDialog {
  readonly button: Locator;
  readonly dialog: Locator;
  readonly link: Locator;
  readonly items: Locator;

  constructor(readonly page: Page) {
    this.button = page.getByTestId('share-button');
    this.dialog = page.getByRole('dialog', { name: 'Share this chat' });
    this.link = this.dialog.getByRole('textbox', { name: 'Share link' });
    this.items = this.dialog.getByTestId('share-item');
  }

  async open(): Promise<void> {
    await this.button.click();
    await expect(this.dialog).toBeVisible();
  }

  /** Makes a new link (a snapshot of now); returns its URL. */
  async createLink(): Promise<string> {
    await this.dialog.getByRole('button', { name: 'Create link', exact: true }).click();
    await expect(this.link).toHaveValue(/\/share\/[A-Za-z0-9_-]{22,}$/);
    return await this.link.inputValue();
  }

  item(url: string): Locator {
    return this.items.filter({ hasText: url });
  }

  /** Revokes a link: Revoke, then the confirmation's "Revoke link". */
  async revoke(url: string): Promise<void> {
    await this.item(url).getByRole('button', { name: 'Revoke', exact: true }).click();
    await this.item(url).getByRole('button', { name: 'Revoke link', exact: true }).click();
    await expect(this.item(url)).toHaveCount(0);
  }

  async close(): Promise<void> {
    await this.page.keyboard.press('Escape');
    await expect(this.dialog).toBeHidden();
  }
}
