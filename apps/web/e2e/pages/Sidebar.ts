import { expect, type Locator, type Page } from '@playwright/test';

/** The thread id in a thread page's URL (`/chat/:id`). */
export function threadIdOf(url: string): string {
  const id = new URL(url).pathname.match(/^\/chat\/([^/]+)$/)?.[1];
  if (!id) throw new Error(`not a thread URL: ${url}`);
  return decodeURIComponent(id);
}

/** The sidebar's list of threads: links, the "…" menu (Rename, Delete), the delete dialog. */
export class Sidebar {
  readonly root: Locator;
  readonly items: Locator;
  readonly renameInput: Locator;

  constructor(readonly page: Page) {
    this.root = page.getByRole('navigation', { name: 'Chats' });
    this.items = this.root.getByTestId('thread-item');
    this.renameInput = this.root.getByRole('textbox', { name: 'Chat title' });
  }

  item(threadId: string): Locator {
    return this.root.locator(`[data-testid="thread-item"][data-thread-id="${threadId}"]`);
  }

  link(threadId: string): Locator {
    return this.item(threadId).getByRole('link');
  }

  actionsButton(threadId: string): Locator {
    return this.item(threadId).getByRole('button', { name: 'Thread actions', exact: true });
  }

  /** The open "…" menu. */
  menu(): Locator {
    return this.page.getByRole('menu');
  }

  async openActions(threadId: string): Promise<void> {
    await this.item(threadId).hover();
    await this.actionsButton(threadId).click();
    await expect(this.menu()).toBeVisible();
  }

  /** Opens the in-place title editor through the menu; returns its input, focused. */
  async startRenaming(threadId: string): Promise<Locator> {
    await this.openActions(threadId);
    await this.menu().getByRole('menuitem', { name: 'Rename' }).click();
    const input = this.item(threadId).getByRole('textbox', { name: 'Chat title' });
    await expect(input).toBeFocused();
    return input;
  }

  /** Renames a thread: replaces the title and saves with Enter. */
  async rename(threadId: string, title: string): Promise<void> {
    const input = await this.startRenaming(threadId);
    await input.fill(title);
    await input.press('Enter');
    await expect(this.renameInput).toBeHidden();
  }

  deleteDialog(): Locator {
    return this.page.getByRole('dialog', { name: 'Delete this chat?' });
  }

  /** Deletes a thread through the menu and the confirmation dialog. */
  async delete(threadId: string): Promise<void> {
    await this.openActions(threadId);
    await this.menu().getByRole('menuitem', { name: 'Delete' }).click();
    await this.deleteDialog().getByRole('button', { name: 'Delete', exact: true }).click();
    await expect(this.deleteDialog()).toBeHidden();
  }
}
