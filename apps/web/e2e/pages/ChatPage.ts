import { expect, type Locator, type Page } from '@playwright/test';

/** The start page and a thread's page: transcript, composer, Stop, error banner. */
export class ChatPage {
  readonly transcript: Locator;
  readonly userMessages: Locator;
  readonly assistantMessages: Locator;
  readonly composer: Locator;
  readonly composerInput: Locator;
  readonly stopButton: Locator;
  readonly queueFullNotice: Locator;
  readonly errorBanner: Locator;

  constructor(readonly page: Page) {
    this.transcript = page.getByTestId('transcript');
    this.userMessages = this.transcript.locator('article[data-role="user"]');
    this.assistantMessages = this.transcript.locator('article[data-role="assistant"]');
    this.composer = page.getByTestId('composer');
    this.composerInput = this.composer.locator('textarea');
    this.stopButton = page.getByRole('button', { name: 'Stop', exact: true });
    this.queueFullNotice = page.getByTestId('queue-full');
    this.errorBanner = page.getByTestId('error-banner');
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

  /** The reply text of an assistant message, without its badges. */
  async replyText(reply: Locator): Promise<string> {
    return ((await reply.getByTestId('message-text').textContent()) ?? '').trim();
  }

  /** Waits until nothing streams any more (Stop gone). */
  async waitForIdle(timeout = 30_000): Promise<void> {
    await expect(this.stopButton).toBeHidden({ timeout });
  }
}
