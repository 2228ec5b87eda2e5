import { expect, type Locator, type Page } from '@playwright/test';

/** The Queue Dock above the composer: queued turns, their edit/delete, Send now / Stop & send. */
export class QueueDock {
  readonly root: Locator;
  readonly items: Locator;
  readonly counter: Locator;

  constructor(readonly page: Page) {
    this.root = page.getByTestId('queue-dock');
    this.items = this.root.getByTestId('queue-item');
    this.counter = this.root.getByTestId('queue-count');
  }

  item(index: number): Locator {
    return this.items.nth(index);
  }

  itemText(index: number): Locator {
    return this.item(index).getByTestId('queue-item-text');
  }

  /** Texts of the queued items, in queue order. */
  async texts(): Promise<string[]> {
    return (await this.root.getByTestId('queue-item-text').allInnerTexts()).map((text) => text.trim());
  }

  async expectTexts(texts: string[]): Promise<void> {
    if (texts.length === 0) {
      await expect(this.root).toBeHidden();
      return;
    }
    await expect(this.root.getByTestId('queue-item-text')).toHaveText(texts);
    await expect(this.counter).toHaveText(`${texts.length} / 5`);
  }

  editor(index: number): Locator {
    return this.item(index).getByTestId('queue-item-editor');
  }

  async startEditing(index: number): Promise<Locator> {
    await this.item(index).getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = this.editor(index);
    await expect(editor).toBeFocused();
    return editor;
  }

  /** Edits an item in place and saves it with Enter. */
  async edit(index: number, text: string): Promise<void> {
    const editor = await this.startEditing(index);
    await editor.fill(text);
    await editor.press('Enter');
    await expect(this.editor(index)).toBeHidden();
  }

  async delete(index: number): Promise<void> {
    await this.item(index).getByRole('button', { name: 'Delete', exact: true }).click();
  }

  /** A failed head's delete: its attempt goes and the queue goes on (Q11). */
  async removeAndContinue(): Promise<void> {
    await this.item(0).getByRole('button', { name: 'Remove and continue', exact: true }).click();
  }

  /** The head's action: "Stop & send" while a reply runs, "Send now" when idle, "Retry" when failed. */
  headAction(name: 'Stop & send' | 'Send now' | 'Retry'): Locator {
    return this.item(0).getByRole('button', { name, exact: true });
  }

  /** The head's status line: why it waits, in plain words. */
  headStatus(): Locator {
    return this.when(0);
  }

  /** When an item runs, in plain words (every item says it). */
  when(index: number): Locator {
    return this.item(index).getByTestId('queue-item-when');
  }

  headError(): Locator {
    return this.item(0).getByTestId('queue-item-error');
  }
}
