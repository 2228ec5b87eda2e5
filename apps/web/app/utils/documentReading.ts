import { type Attachment, documentTokensFor, isDocumentMediaType } from '@chat/contracts';

/**
 * What the model will read of the documents attached in the composer, said before sending (D1):
 * the same rule as the API's call (`documentTokensFor`), estimated from what the upload answered
 * (a document's words), so no request is needed while the person types.
 */

/**
 * Tokens a word of a document costs, about: byte-pair vocabularies spend 1.2-1.4 a word of
 * English prose, and the page knows a document's words, not its tokens.
 */
export const TOKENS_PER_WORD = 1.3;

export function estimatedTokens(words: number): number {
  return Math.ceil(words * TOKENS_PER_WORD);
}

/** A draft's words, counted as the server counts a document's (runs of non-space). */
export function wordsOf(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

export interface ComposerDocumentsInput {
  /** The composer's uploaded attachments (images are skipped). */
  attachments: readonly Attachment[];
  /** The chat model's window and what the next call holds before the new message (the meter's). */
  window: number;
  used: number;
  /** The message typed so far: it shares the window with the documents. */
  draft: string;
  /** The model the message will run on, as `GET /api/models` gives it. */
  model: { label: string; documentTokens: number };
}

export interface ComposerDocumentsView {
  /** Tokens the documents add to the next call: what the budget reads of them, not more. */
  tokens: number;
  /** One line a person reads for each document that will not be read whole. */
  warnings: string[];
}

/**
 * The composer's documents as the next call would read them: in the order attached, each takes
 * what is left of the message's budget, as the API fits a message's documents.
 */
export function composerDocumentsView(input: ComposerDocumentsInput): ComposerDocumentsView {
  const documents = input.attachments.filter((attachment) => isDocumentMediaType(attachment.mediaType));
  let left = documentTokensFor(
    input.window,
    input.used + estimatedTokens(wordsOf(input.draft)),
    input.model.documentTokens,
  );
  let tokens = 0;
  const warnings: string[] = [];
  for (const document of documents) {
    const whole = estimatedTokens(document.words ?? 0);
    const read = Math.min(whole, left);
    left -= read;
    tokens += read;
    if (read < whole) warnings.push(cutWarning(document, read / whole, input.model.label));
  }
  return { tokens, warnings };
}

/** `Only about pages 1-12 of 60 of report.pdf will be read by Small.` */
function cutWarning(document: Attachment, share: number, model: string): string {
  const { name, pages } = document;
  if (pages !== undefined && pages > 0) {
    const read = Math.floor(pages * share);
    if (read === 0) return `${name} will not be read by ${model}: its window has no room left for it.`;
    const range = read === 1 ? 'page 1' : `pages 1-${read}`;
    return `Only about ${range} of ${pages} of ${name} will be read by ${model}.`;
  }
  const percent = Math.floor(share * 100);
  if (percent === 0) return `${name} will not be read by ${model}: its window has no room left for it.`;
  return `Only about ${percent}% of ${name} will be read by ${model}.`;
}
