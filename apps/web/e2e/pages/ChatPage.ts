import { expect, type Locator, type Page } from '@playwright/test';

/**
 * The start page and a thread's page: transcript, composer, Stop, error banner, and the
 * versions of a conversation (edit, version controls, delete).
 */
export class ChatPage {
  readonly transcript: Locator;
  readonly userMessages: Locator;
  readonly assistantMessages: Locator;
  readonly composer: Locator;
  readonly composerInput: Locator;
  readonly stopButton: Locator;
  readonly queueFullNotice: Locator;
  readonly errorBanner: Locator;
  /** The inline editor of a user message (its textarea). */
  readonly messageEditor: Locator;
  /** The hint under the composer ("Enter sends", "Enter adds to the queue"). */
  readonly composerHint: Locator;
  /** The title in the page's header. */
  readonly headerTitle: Locator;
  /** The toast a tab shows when its open chat was deleted somewhere else. */
  readonly deletedElsewhereNotice: Locator;

  constructor(readonly page: Page) {
    this.transcript = page.getByTestId('transcript');
    this.userMessages = this.transcript.locator('article[data-role="user"]');
    this.assistantMessages = this.transcript.locator('article[data-role="assistant"]');
    this.composer = page.getByTestId('composer');
    this.composerInput = this.composer.locator('textarea');
    this.stopButton = page.getByRole('button', { name: 'Stop', exact: true });
    this.queueFullNotice = page.getByTestId('queue-full');
    this.errorBanner = page.getByTestId('error-banner');
    this.composerHint = page.getByTestId('composer-hint');
    this.messageEditor = this.transcript.getByTestId('message-editor-input');
    this.headerTitle = page.getByRole('heading', { level: 1 });
    this.deletedElsewhereNotice = page.getByText('This chat was deleted', { exact: true });
  }

  /**
   * A drag of a file (or of text) crossing the page as a browser reports it: `dragenter` and a
   * `dragover` on the element the pointer comes to, then `dragleave` on the one it left (`from`),
   * each bubbling; the next `dragover` is left out, as between two of a real drag.
   */
  async dragFileAcross(
    from: Locator | null,
    to: Locator | null,
    what: 'file' | 'text' = 'file',
  ): Promise<void> {
    const transfer = await this.page.evaluateHandle((what) => {
      const data = new DataTransfer();
      if (what === 'file') data.items.add(new File(['x'], 'dragged.png', { type: 'image/png' }));
      else data.setData('text/plain', 'dragged words');
      return data;
    }, what);
    if (to) {
      await to.dispatchEvent('dragenter', { dataTransfer: transfer });
      await to.dispatchEvent('dragover', { dataTransfer: transfer });
    }
    if (from) await from.dispatchEvent('dragleave', { dataTransfer: transfer });
    await transfer.dispose();
  }

  /** The app is interactive (input typed before this would be lost). */
  async waitUntilReady(): Promise<void> {
    await expect(this.page.locator('html[data-hydrated="true"]')).toBeAttached();
    await expect(this.composerInput).toBeEnabled();
  }

  async openStartPage(): Promise<void> {
    await this.page.goto('/');
    await this.waitUntilReady();
  }

  /** Starts a new thread from the start page with a first message; returns the thread's URL. */
  async startThread(text: string): Promise<string> {
    await this.openStartPage();
    await this.composerInput.fill(text);
    await this.composerInput.press('Enter');
    await this.page.waitForURL(/\/chat\/[^/]+$/);
    await expect(this.userMessages.first()).toBeVisible();
    return this.page.url();
  }

  /** Types a message and presses Enter (sends, or queues while a reply streams). */
  async send(text: string): Promise<void> {
    await this.composerInput.fill(text);
    await this.composerInput.press('Enter');
  }

  async reload(): Promise<void> {
    await this.page.reload();
    await this.waitUntilReady();
  }

  lastReply(): Locator {
    return this.assistantMessages.last();
  }

  reply(index: number): Locator {
    return this.assistantMessages.nth(index);
  }

  interruptedBadge(reply: Locator): Locator {
    return reply.getByTestId('interrupted-badge');
  }

  /** The "Failed" mark on a message of a failed attempt (Q11); the Dock's head says why. */
  failedNote(message: Locator): Locator {
    return message.getByTestId('failed-attempt');
  }

  /** The reply text of an assistant message, without its badges. */
  async replyText(reply: Locator): Promise<string> {
    return ((await reply.getByTestId('message-text').textContent()) ?? '').trim();
  }

  /** Waits until nothing streams any more (Stop gone). */
  async waitForIdle(timeout = 30_000): Promise<void> {
    await expect(this.stopButton).toBeHidden({ timeout });
  }

  /** The text of a message as shown (without its badges and controls). */
  messageText(message: Locator): Locator {
    return message.getByTestId('message-text');
  }

  /** Replies of the local model to `text` (it starts every reply by quoting the message). */
  repliesTo(text: string): Locator {
    return this.assistantMessages.filter({ hasText: `You said: "${text}"` });
  }

  lastReplyText(): Locator {
    return this.messageText(this.lastReply());
  }

  // --- versions (B1-B5) -------------------------------------------------------------

  editButton(message: Locator = this.userMessages.last()): Locator {
    return message.getByRole('button', { name: 'Edit message', exact: true });
  }

  /** Opens the inline editor of a user message; returns its textarea, focused. */
  async startEditing(message: Locator = this.userMessages.last()): Promise<Locator> {
    await message.hover();
    await this.editButton(message).click();
    await expect(this.messageEditor).toBeFocused();
    return this.messageEditor;
  }

  /** Edits a user message into a new version: replaces its text and saves with Enter. */
  async editMessage(message: Locator, text: string): Promise<void> {
    const editor = await this.startEditing(message);
    await editor.fill(text);
    await editor.press('Enter');
    await expect(this.messageEditor).toBeHidden();
  }

  /** The version controls of a user message (the first one by default: the usual edit). */
  versionControls(message: Locator = this.userMessages.first()): Locator {
    return message.getByTestId('version-controls');
  }

  /** The `k / n` label of a user message's version controls. */
  versionLabel(message: Locator = this.userMessages.first()): Locator {
    return message.getByTestId('version-label');
  }

  previousVersionButton(message: Locator = this.userMessages.first()): Locator {
    return message.getByRole('button', { name: 'Previous version', exact: true });
  }

  nextVersionButton(message: Locator = this.userMessages.first()): Locator {
    return message.getByRole('button', { name: 'Next version', exact: true });
  }

  /** Shows the previous version and waits until the label says so. */
  async previousVersion(message: Locator = this.userMessages.first()): Promise<void> {
    await this.stepVersion(message, this.previousVersionButton(message), -1);
  }

  /** Shows the next version and waits until the label says so. */
  async nextVersion(message: Locator = this.userMessages.first()): Promise<void> {
    await this.stepVersion(message, this.nextVersionButton(message), 1);
  }

  private async stepVersion(message: Locator, button: Locator, by: -1 | 1): Promise<void> {
    const label = this.versionLabel(message);
    const [index, count] = ((await label.textContent()) ?? '').split('/').map((part) => Number(part.trim()));
    await button.click();
    await expect(label).toHaveText(`${Number(index) + by} / ${count}`);
  }

  deleteButton(message: Locator = this.userMessages.last()): Locator {
    return message.getByRole('button', { name: 'Delete message', exact: true });
  }

  /** The confirmation step of Delete. */
  deleteDialog(): Locator {
    return this.page.getByRole('dialog', { name: 'Delete this message?' });
  }

  /** Deletes the latest user message (and its reply) through the confirmation dialog. */
  async deleteLatest(): Promise<void> {
    const latest = this.userMessages.last();
    await latest.hover();
    await this.deleteButton(latest).click();
    await this.deleteDialog().getByRole('button', { name: 'Delete', exact: true }).click();
    await expect(this.deleteDialog()).toBeHidden();
  }
}
