import { type Download, expect, type Locator, type Page } from '@playwright/test';

/**
 * Taking a chat anywhere (P1-P4): the chat menu's exports, the sidebar's Import, a message's
 * "New chat from here", and a shared snapshot's "Continue this chat".
 */
export class ChatCopies {
  readonly menuButton: Locator;
  readonly importButton: Locator;
  readonly importFile: Locator;
  readonly forkOrigin: Locator;

  constructor(readonly page: Page) {
    this.menuButton = page.getByTestId('chat-menu');
    this.importButton = page.getByTestId('import-chat');
    this.importFile = page.getByTestId('import-file');
    this.forkOrigin = page.getByTestId('fork-origin');
  }

  /** Chooses an export in the chat menu; returns the download it starts. */
  async export(format: 'Markdown' | 'JSON'): Promise<Download> {
    await this.menuButton.click();
    const downloading = this.page.waitForEvent('download');
    await this.page.getByRole('menuitem', { name: new RegExp(`^${format}:`) }).click();
    return await downloading;
  }

  /** Imports a file through the sidebar's Import (its file chooser); waits for the new chat. */
  async import(path: string): Promise<void> {
    const before = this.page.url();
    const choosing = this.page.waitForEvent('filechooser');
    await this.importButton.click();
    await (await choosing).setFiles(path);
    await expect(this.page).not.toHaveURL(before);
  }

  /** "New chat from here" under a message (shown on hover). */
  async forkFrom(message: Locator): Promise<void> {
    const before = this.page.url();
    await message.hover();
    await message.getByRole('button', { name: 'New chat from here' }).click();
    await expect(this.page).not.toHaveURL(before);
    await expect(this.page).toHaveURL(/\/chat\/[^/]+$/);
  }
}
