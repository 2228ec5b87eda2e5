import { characterCount, hasVisibleText, MAX_TEXT_LENGTH, refusalMessages } from '@chat/contracts';
import { ApiError } from '../../platform/errors';

/**
 * The text every message passes before anything is written (a send, an edit in the Dock, an edit
 * into a new version): 1 to 32,000 characters after trimming, counted as code points so 32,000
 * emoji pass like 32,000 letters, some of them visible (a zero-width space alone is empty).
 * Returns it trimmed.
 */
export function validMessageText(text: string): string {
  const trimmed = text.trim();
  if (!hasVisibleText(trimmed)) throw new ApiError('bad_request', refusalMessages.bad_request.emptyText);
  if (characterCount(trimmed) > MAX_TEXT_LENGTH)
    throw new ApiError('too_large', refusalMessages.too_large.text);
  return trimmed;
}
