import { type Attachment, isDocumentMediaType } from '@chat/contracts';
import { DOCUMENT_NOT_AVAILABLE, documentNotReadText, documentPromptText } from '../../agent/documentPrompt';
import { PAGE_BREAK } from './documentCheck';

/** How much of documents' text one model call holds, in tokens, and how tokens are counted. */
export interface DocumentBudget {
  perMessage: number;
  perTurn: number;
  countTokens(text: string): number;
}

/** A document reference of a prompt: which message (its index) and which attachment. */
export interface DocumentReference {
  message: number;
  id: string;
}

const numbers = new Intl.NumberFormat('en-US');

/**
 * The text each document reference becomes for one model call (D1): the newest messages first,
 * each message's documents share `perMessage` tokens and all of them `perTurn`; a document is
 * taken whole pages (a PDF) or whole lines (text) at a time, and what does not fit is cut with a
 * note that says what was read (`pages 1-40 of 120 were read`). Counting stops at the budget, so
 * a long document costs what fits, not its length. Keyed `message:id`.
 */
export function documentTexts(
  references: readonly DocumentReference[],
  described: ReadonlyMap<string, Attachment>,
  texts: ReadonlyMap<string, string>,
  budget: DocumentBudget,
): Map<string, string> {
  const result = new Map<string, string>();
  let turnLeft = budget.perTurn;
  const newestFirst = [...new Set(references.map((reference) => reference.message))].sort((a, b) => b - a);
  for (const message of newestFirst) {
    let messageLeft = Math.min(budget.perMessage, turnLeft);
    for (const { id } of references.filter((reference) => reference.message === message)) {
      const attachment = described.get(id);
      const text = texts.get(id);
      const key = `${message}:${id}`;
      if (!attachment || text === undefined || !isDocumentMediaType(attachment.mediaType)) {
        result.set(key, DOCUMENT_NOT_AVAILABLE);
        continue;
      }
      const fitted = fitDocument(attachment, text, messageLeft, budget.countTokens);
      messageLeft -= fitted.tokens;
      turnLeft -= fitted.tokens;
      result.set(key, fitted.text);
    }
  }
  return result;
}

function fitDocument(
  attachment: Attachment,
  text: string,
  budget: number,
  countTokens: (text: string) => number,
): { text: string; tokens: number } {
  const isPdf = attachment.mediaType === 'application/pdf';
  const pieces = isPdf ? text.split(PAGE_BREAK) : text.split('\n');
  let tokens = 0;
  let taken = 0;
  for (const piece of pieces) {
    const cost = countTokens(piece) + 1;
    if (tokens + cost > budget) break;
    tokens += cost;
    taken += 1;
  }
  if (taken === 0) {
    const what = isPdf ? 'pages' : 'lines';
    return {
      text: documentNotReadText(attachment.name, `the ${what} did not fit the context budget for documents`),
      tokens: 0,
    };
  }
  const unit = isPdf ? 'pages' : 'lines';
  const cut =
    taken < pieces.length
      ? `${unit} 1-${numbers.format(taken)} of ${numbers.format(pieces.length)} were read`
      : undefined;
  return {
    text: documentPromptText({
      name: attachment.name,
      mediaType: attachment.mediaType,
      ...(attachment.pages === undefined ? {} : { pages: attachment.pages }),
      text: pieces.slice(0, taken).join(isPdf ? '\n\n' : '\n'),
      ...(cut ? { cut } : {}),
    }),
    tokens,
  };
}
