import { expect, type Locator } from '@playwright/test';

/** The thumbs under a reply, and the comment that goes with a thumbs down. */
export class Feedback {
  readonly root: Locator;
  readonly up: Locator;
  readonly down: Locator;
  readonly commentText: Locator;

  constructor(reply: Locator) {
    this.root = reply.getByTestId('feedback');
    this.up = reply.getByRole('button', { name: 'Good reply', exact: true });
    this.down = reply.getByRole('button', { name: 'Bad reply', exact: true });
    this.commentText = reply.getByTestId('feedback-comment-text');
  }

  /** Thumbs down, then writes the optional comment and saves it. */
  async downWithComment(comment: string): Promise<void> {
    await this.down.click();
    const page = this.root.page();
    const field = page.getByTestId('feedback-comment');
    await expect(field).toBeFocused();
    await field.fill(comment);
    await page.getByTestId('feedback-form').getByRole('button', { name: 'Save', exact: true }).click();
    await expect(field).toBeHidden();
    await expect(this.commentText).toHaveText(comment);
  }

  async expectRating(rating: 'up' | 'down' | null): Promise<void> {
    await expect(this.up).toHaveAttribute('aria-pressed', String(rating === 'up'));
    await expect(this.down).toHaveAttribute('aria-pressed', String(rating === 'down'));
  }
}
