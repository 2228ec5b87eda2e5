import { type DocumentMediaType, MAX_DOCUMENT_BYTES, refusalMessages } from '@chat/contracts';
import { ApiError } from '../../platform/errors';
import { cleanName } from './imageCheck';
import { type PdfReadLimits, readPdfText } from './pdfText';

/** A document that passed the checks: described from its own bytes, with its text. */
export interface CheckedDocument {
  name: string;
  mediaType: DocumentMediaType;
  size: number;
  width: 0;
  height: 0;
  pages: number | null;
  words: number;
  /** The text the model reads; a PDF's pages apart by form feeds (`PAGE_BREAK`). */
  text: string;
}

/** Between two pages of a PDF's stored text (pdf text never holds one: the worker removes them). */
export const PAGE_BREAK = '\f';

/**
 * What the budget takes a document's text by (D1): a PDF's pages, any other text's lines. The one
 * home of that rule: extraction counts the pieces with it, the model context cuts by it.
 */
export function pieceBreak(mediaType: DocumentMediaType): string {
  return mediaType === 'application/pdf' ? PAGE_BREAK : '\n';
}

/** How many pieces a document's text holds: its breaks and one (as `split` counts them). */
export function countPieces(mediaType: DocumentMediaType, text: string): number {
  const at = pieceBreak(mediaType);
  let pieces = 1;
  for (let index = text.indexOf(at); index >= 0; index = text.indexOf(at, index + 1)) pieces += 1;
  return pieces;
}

const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

/** A PDF starts with its header, `%PDF-`. */
export function isPdf(bytes: Uint8Array): boolean {
  return PDF_HEADER.every((byte, index) => bytes[index] === byte);
}

/** Text is valid UTF-8 without a NUL byte (a binary file almost always has one); else undefined. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Which kind of text a name says a text file is (the bytes already said it is text). */
function textKind(name: string): DocumentMediaType {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (extension === 'md' || extension === 'markdown') return 'text/markdown';
  if (extension === 'csv') return 'text/csv';
  if (extension === 'json') return 'application/json';
  return 'text/plain';
}

export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/**
 * The checks a document passes before it is stored (D1): at most MAX_DOCUMENT_BYTES
 * (`413 too_large`); a PDF by its header, read once in a bounded worker (too many pages
 * `413 too_large`; unreadable, too slow or too big to read `415 unsupported_media_type` with the
 * reason); otherwise text by being valid UTF-8 without NUL. Undefined when the bytes are neither
 * (the caller tries the other kinds, then refuses).
 */
export async function checkDocument(
  bytes: Uint8Array,
  name: string,
  limits: PdfReadLimits,
): Promise<CheckedDocument | undefined> {
  if (bytes.byteLength > MAX_DOCUMENT_BYTES)
    throw new ApiError('too_large', refusalMessages.too_large.document);
  const described = (mediaType: DocumentMediaType, text: string, pages: number | null) => ({
    name: cleanName(name, mediaType),
    mediaType,
    size: bytes.byteLength,
    width: 0 as const,
    height: 0 as const,
    pages,
    words: countWords(text),
    text,
  });
  if (isPdf(bytes)) {
    const read = await readPdfText(bytes, limits);
    if (read.ok) return described('application/pdf', read.pages.join(PAGE_BREAK), read.pages.length);
    if (read.reason === 'pages') throw new ApiError('too_large', refusalMessages.too_large.pages);
    throw new ApiError(
      'unsupported_media_type',
      refusalMessages.unsupported_media_type.unreadablePdf(PDF_REASONS[read.reason]),
    );
  }
  const text = utf8Text(bytes);
  if (text === undefined) return undefined;
  return described(textKind(name), text, null);
}

const PDF_REASONS = {
  unreadable: 'it is damaged or not a PDF',
  timeout: 'reading it took too long',
  memory: 'reading it needed too much memory',
  text: 'it holds too much text',
  bomb: 'its compressed content expands too far',
} as const;
