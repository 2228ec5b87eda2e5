import { expect, type Locator, type Page } from '@playwright/test';
import { ChatPage } from './ChatPage';

/**
 * Agent chats (A1, A6) as a person sees them: the start page's choice of a workspace (and a
 * directory inside it), the badge that says a chat is an agent's and where it works, and the
 * agent's tool calls as tool cards.
 */
export class AgentChat {
  readonly picker: Locator;
  readonly kind: Locator;
  readonly directory: Locator;
  readonly headerBadge: Locator;

  constructor(readonly page: Page) {
    this.picker = page.getByTestId('agent-picker');
    this.kind = page.getByRole('combobox', { name: 'New chat kind' });
    this.directory = page.getByRole('textbox', { name: 'Directory inside the workspace (optional)' });
    // The sidebar marks an agent chat with an icon only: the badge is the chat header's.
    this.headerBadge = page.getByTestId('agent-badge');
  }

  /** Picks what the new chat is on the start page: `Agent on <workspace>`, or the model. */
  async pick(option: string): Promise<void> {
    await this.kind.click();
    await this.page.getByRole('option', { name: option, exact: true }).click();
    await expect(this.kind).toContainText(option);
  }

  /**
   * Starts an agent chat from the start page on the workspace (or a directory in it) with a first
   * message; returns its id.
   */
  async start(text: string, directory?: string): Promise<string> {
    const chat = new ChatPage(this.page);
    await chat.openStartPage();
    await this.pick('Agent on projects');
    if (directory) await this.directory.fill(directory);
    await chat.composerInput.fill(text);
    await chat.composerInput.press('Enter');
    await this.page.waitForURL(/\/chat\/[^/]+$/);
    await expect(chat.userMessages.first()).toBeVisible();
    return new URL(this.page.url()).pathname.split('/').pop() as string;
  }

  /** The sidebar's entry of a chat, by its id. */
  sidebarItem(threadId: string): Locator {
    return this.page.locator(`[data-testid="thread-item"][data-thread-id="${threadId}"]`);
  }

  /** The tool cards of a reply, newest last. */
  toolCards(reply: Locator, toolName?: string): Locator {
    const cards = reply.getByTestId('tool-call');
    return toolName ? cards.and(this.page.locator(`[data-tool-name="${toolName}"]`)) : cards;
  }

  /** One tool card's parts. */
  card(card: Locator) {
    return {
      card,
      outcome: card.getByTestId('tool-call-outcome'),
      detail: card.getByTestId('tool-call-detail'),
      toggle: card.getByTestId('tool-call-toggle'),
      result: card.getByTestId('tool-call-result'),
      approve: card.getByRole('button', { name: 'Approve', exact: true }),
      deny: card.getByRole('button', { name: 'Deny', exact: true }),
    };
  }
}
