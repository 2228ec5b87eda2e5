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

  /** `timeout`: for a Dock that changes only as replies run (the default is the config's). */
  async expectTexts(texts: string[], timeout?: number): Promise<void> {
    const within = timeout === undefined ? {} : { timeout };
    if (texts.length === 0) {
      await expect(this.root).toBeHidden(within);
      return;
    }
    await expect(this.root.getByTestId('queue-item-text')).toHaveText(texts, within);
    await expect(this.counter).toHaveText(`${texts.length} / 5`, within);
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

  /** An item's "More" menu button (its moves, Run next, Stop & send this, merge). */
  menuButton(index: number): Locator {
    return this.item(index).getByTestId('queue-item-menu');
  }

  /** Opens an item's menu and chooses `action` ("Run next", "Stop & send this", "Move up", ...). */
  async choose(index: number, action: string | RegExp): Promise<void> {
    await this.menuButton(index).click();
    await this.page.getByRole('menuitem', { name: action }).click();
  }

  /**
   * Drags item `from` by its grip onto the place of item `to` (pointer moves, as a hand does).
   * `landsAt`: where the Dock shows it before it is let go, when that is not `to` (nothing goes
   * ahead of an item that keeps the front).
   */
  async drag(from: number, to: number, landsAt = to): Promise<void> {
    await this.item(to).scrollIntoViewIfNeeded();
    const dragged = await this.item(from).getAttribute('data-turn-id');
    const grip = await this.item(from).getByTestId('queue-item-grip').boundingBox();
    const target = await this.item(to).boundingBox();
    if (!grip || !target) throw new Error('the items to drag between are not on screen');
    const x = grip.x + grip.width / 2;
    await this.page.mouse.move(x, grip.y + grip.height / 2);
    await this.page.mouse.down();
    const y = to < from ? target.y + 4 : target.y + target.height - 4;
    await this.page.mouse.move(x, y, { steps: 12 });
    // The drag follows the pointer on the page's own timer: let go once the item is shown at its
    // new place, as a hand does (a busy page may not have caught up with the pointer yet).
    await expect(this.item(landsAt)).toHaveAttribute('data-turn-id', dragged ?? '');
    await this.page.mouse.up();
  }

  /** Picks items to merge (the first from its menu), then merges them. */
  async merge(indexes: number[]): Promise<void> {
    const [first, ...rest] = indexes;
    await this.choose(first as number, /Merge with other messages/);
    for (const index of rest) await this.item(index).getByTestId('queue-item-pick').click();
    await this.root.getByRole('button', { name: 'Merge into one message' }).click();
  }
}
