import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import {
  type Attachment,
  type DocumentAttachment,
  documentCutText,
  documentTokensFor,
  isDocumentAttachment,
  MAX_DOCUMENT_TEXT_CHARS,
} from '@chat/contracts';
import { DOCUMENT_NOT_AVAILABLE, documentNotReadText, documentPromptText } from '../../agent/documentPrompt';
import { countPieces, pieceBreak } from './documentCheck';

/** How much of documents' text one model call holds, in tokens, and how tokens are counted. */
export interface DocumentBudget {
  perMessage: number;
  perTurn: number;
  countTokens(text: string): number;
  /** The window of the model the call runs on: the budget is capped by what it leaves (D1). */
  window?: number;
  /** The tokens of a prompt as that model counts them (each document reference as a short part). */
  countPrompt?(prompt: LanguageModelV4Prompt): number;
}

/**
 * The budget of one call: the configured one capped by what the window of the model it runs on
 * leaves once the rest of the prompt and the reply's reserve are counted (`documentTokensFor`).
 */
export function budgetOfCall(budget: DocumentBudget, prompt: LanguageModelV4Prompt): DocumentBudget {
  if (budget.window === undefined || !budget.countPrompt) return budget;
  const others = budget.countPrompt(prompt);
  return {
    ...budget,
    perMessage: documentTokensFor(budget.window, others, budget.perMessage),
    perTurn: documentTokensFor(budget.window, others, budget.perTurn),
  };
}

/** A document reference of a prompt: which message (its index) and which attachment. */
export interface DocumentReference {
  message: number;
  id: string;
}

/** Reads part of a document's stored text (`AttachmentStorage.readTextSlice`). */
export type ReadTextSlice = (
  attachmentId: string,
  from: number,
  chars: number,
) => Promise<{ text: string; pieces: number | null } | undefined>;

/**
 * The text each document reference becomes for one model call (D1): the newest messages first,
 * each message's documents share `perMessage` tokens and all of them `perTurn`; a document is
 * taken whole pages (a PDF) or whole lines (text) at a time, and what does not fit is cut with a
 * note that says what was read (`pages 1-40 of 120 were read`). A text is read from storage only
 * as far as its budget goes (and the first piece past it), never whole: a 500-page PDF costs what
 * its budget costs. Keyed `message:id`; `reads`, when given, gets how many pieces of each
 * document were read and of how many (keyed the same way).
 */
export async function documentTexts(
  references: readonly DocumentReference[],
  described: ReadonlyMap<string, Attachment>,
  read: ReadTextSlice,
  budget: DocumentBudget,
  reads?: Map<string, { read: number; of: number }>,
): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  let turnLeft = budget.perTurn;
  const newestFirst = [...new Set(references.map((reference) => reference.message))].sort((a, b) => b - a);
  for (const message of newestFirst) {
    let messageLeft = Math.min(budget.perMessage, turnLeft);
    for (const { id } of references.filter((reference) => reference.message === message)) {
      const attachment = described.get(id);
      const key = `${message}:${id}`;
      const fitted =
        attachment && isDocumentAttachment(attachment)
          ? await fitDocument(attachment, read, messageLeft, budget.countTokens)
          : undefined;
      if (!fitted) {
        result.set(key, DOCUMENT_NOT_AVAILABLE);
        continue;
      }
      messageLeft -= fitted.tokens;
      turnLeft -= fitted.tokens;
      result.set(key, fitted.text);
      reads?.set(key, { read: fitted.read, of: fitted.of });
    }
  }
  return result;
}

/** The first read of a document, in characters: about what its budget holds (a token is ~4). */
const FIRST_READ_CHARS_PER_TOKEN = 4;
const FIRST_READ_MIN_CHARS = 4_096;

/** Characters as PostgreSQL counts them (code points), not UTF-16 units. */
function codePoints(text: string): number {
  return text.length - (text.match(/[\uD800-\uDBFF]/g)?.length ?? 0);
}

/**
 * As much of a document as fits `budget`, whole pieces at a time, reading its text a slice at a
 * time (each twice the last) until the first piece that does not fit is read whole, or the text
 * ends. Undefined when the text is gone.
 */
async function fitDocument(
  attachment: DocumentAttachment,
  read: ReadTextSlice,
  budget: number,
  countTokens: (text: string) => number,
): Promise<{ text: string; tokens: number; read: number; of: number } | undefined> {
  const isPdf = attachment.mediaType === 'application/pdf';
  const at = pieceBreak(attachment.mediaType);
  let chunk = Math.max(FIRST_READ_MIN_CHARS, budget * FIRST_READ_CHARS_PER_TOKEN);
  let buffered = '';
  let offset = 0;
  let ended = false;
  let pieces: number | null = null;
  const taken: string[] = [];
  let tokens = 0;
  let complete = false;
  for (;;) {
    while (!ended && !buffered.includes(at)) {
      const slice = await read(attachment.id, offset, chunk);
      if (!slice) return undefined;
      pieces = slice.pieces;
      buffered += slice.text;
      const count = codePoints(slice.text);
      offset += count;
      ended = count < chunk;
      chunk *= 2;
    }
    const end = buffered.indexOf(at);
    const piece = end < 0 ? buffered : buffered.slice(0, end);
    const cost = countTokens(piece) + 1;
    if (tokens + cost > budget) break;
    tokens += cost;
    taken.push(piece);
    if (end < 0) {
      complete = true;
      break;
    }
    buffered = buffered.slice(end + at.length);
  }
  // Only a row from before pieces were counted lacks its count: its rest is read to count them.
  const total = complete
    ? taken.length
    : (pieces ?? taken.length + (await piecesLeft(attachment, read, buffered, offset, ended)));
  const unit = isPdf ? 'pages' : 'lines';
  if (taken.length === 0) {
    return {
      text: documentNotReadText(attachment.name, `the ${unit} did not fit the context budget for documents`),
      tokens: 0,
      read: 0,
      of: total,
    };
  }
  const cut = taken.length < total ? documentCutText({ read: taken.length, of: total, unit }) : undefined;
  return {
    text: documentPromptText({
      name: attachment.name,
      mediaType: attachment.mediaType,
      ...(attachment.pages === undefined ? {} : { pages: attachment.pages }),
      text: taken.join(isPdf ? '\n\n' : '\n'),
      ...(cut ? { cut } : {}),
    }),
    tokens,
    read: taken.length,
    of: total,
  };
}

/** The pieces after those taken: the buffered one and every one in the text not yet read. */
async function piecesLeft(
  attachment: DocumentAttachment,
  read: ReadTextSlice,
  buffered: string,
  offset: number,
  ended: boolean,
): Promise<number> {
  const rest = ended ? '' : ((await read(attachment.id, offset, MAX_DOCUMENT_TEXT_CHARS))?.text ?? '');
  return countPieces(attachment.mediaType, buffered + rest);
}
