import {
  DOCX_MEDIA_TYPE,
  type DocumentMediaType,
  MAX_DOCUMENT_BYTES,
  MAX_DOCX_PARTS,
  MAX_DOCX_UNPACKED_BYTES,
  refusalMessages,
} from '@chat/contracts';
import { ApiError } from '../../platform/errors';
import type { DocumentKind, DocumentRead } from './documentText';
import { cleanName } from './imageCheck';
import { countBreaks, countWords, readText } from './textCounts.mjs';

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
  /** How many pieces (`pieceBreak`) the text holds: a PDF's pages, a text's (or Word document's) lines. */
  pieces: number;
}

/** Reads a document's text out of the API's process (`documentText.ts`, bound to its request). */
export type ReadDocument = (kind: DocumentKind, bytes: Uint8Array) => Promise<DocumentRead>;

/**
 * Texts up to this size are read in the API's process (a few milliseconds); a larger one in a
 * reading process, so that its walk never holds the event loop.
 */
const TEXT_READ_IN_PROCESS_BYTES = 256 * 1024;

/** Between two pages of a PDF's stored text (pdf text never holds one: the reader removes them). */
export const PAGE_BREAK = '\f';

/**
 * What the budget takes a document's text by (D1): a PDF's pages, any other text's lines (a Word
 * document's text holds one paragraph a line). The one home of that rule: extraction counts the
 * pieces with it, the model context cuts by it.
 */
export function pieceBreak(mediaType: DocumentMediaType): string {
  return mediaType === 'application/pdf' ? PAGE_BREAK : '\n';
}

/** How many pieces a document's text holds: its breaks and one (as `split` counts them). */
export function countPieces(mediaType: DocumentMediaType, text: string): number {
  return countBreaks(text, pieceBreak(mediaType)) + 1;
}

const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

/** A PDF starts with its header, `%PDF-`. */
export function isPdf(bytes: Uint8Array): boolean {
  return PDF_HEADER.every((byte, index) => bytes[index] === byte);
}

/**
 * A zip starts with a local entry (`PK\x03\x04`), an empty one with its end record (`PK\x05\x06`).
 * Whether it is a Word document only reading it tells (`docxText.mjs`).
 */
export function isZip(bytes: Uint8Array): boolean {
  if (bytes[0] !== 0x50 || bytes[1] !== 0x4b) return false;
  return (bytes[2] === 0x03 && bytes[3] === 0x04) || (bytes[2] === 0x05 && bytes[3] === 0x06);
}

/** Which kind of text a name says a text file is (the bytes already said it is text). */
function textKind(name: string): DocumentMediaType {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  if (extension === 'md' || extension === 'markdown') return 'text/markdown';
  if (extension === 'csv') return 'text/csv';
  if (extension === 'json') return 'application/json';
  return 'text/plain';
}

/** A document past MAX_DOCUMENT_BYTES, whether it came as an upload or inside an import. */
export const documentTooLarge = () => new ApiError('too_large', refusalMessages.too_large.document);

/**
 * The checks a document passes before it is stored (D1): at most MAX_DOCUMENT_BYTES
 * (`413 too_large`); a PDF by its header, read once by `read` under the OS's limits (too many pages
 * `413 too_large`; unreadable, too slow or too big to read `415 unsupported_media_type` with the
 * reason); a zip as a Word document, read the same way (a zip that is no Word document, unpacks
 * too far or cannot be read: `415 unsupported_media_type` with the reason); otherwise text by
 * being valid UTF-8 without NUL. Undefined when the bytes are none of these (the caller tries the
 * other kinds, then refuses).
 */
export async function checkDocument(
  bytes: Uint8Array,
  name: string,
  read: ReadDocument,
): Promise<CheckedDocument | undefined> {
  if (bytes.byteLength > MAX_DOCUMENT_BYTES) throw documentTooLarge();
  const described = (
    mediaType: DocumentMediaType,
    text: string,
    pages: number | null,
    counts: { words: number; pieces: number },
  ) => ({
    name: cleanName(name, mediaType),
    mediaType,
    size: bytes.byteLength,
    width: 0 as const,
    height: 0 as const,
    pages,
    text,
    ...counts,
  });
  if (isPdf(bytes)) {
    const pdf = await read('pdf', bytes);
    if (pdf.ok && 'pages' in pdf) {
      const text = pdf.pages.join(PAGE_BREAK);
      return described('application/pdf', text, pdf.pages.length, {
        words: countWords(text),
        pieces: pdf.pages.length,
      });
    }
    if (!pdf.ok && pdf.reason === 'pages') throw new ApiError('too_large', refusalMessages.too_large.pages);
    throw new ApiError(
      'unsupported_media_type',
      refusalMessages.unsupported_media_type.unreadablePdf(reasonOf(pdf, PDF_REASONS)),
    );
  }
  if (isZip(bytes)) {
    const docx = await read('docx', bytes);
    if (docx.ok && 'text' in docx) {
      return described(DOCX_MEDIA_TYPE, docx.text, null, {
        words: countWords(docx.text),
        pieces: countPieces(DOCX_MEDIA_TYPE, docx.text),
      });
    }
    // A zip that is no Word document (a spreadsheet, a slide deck, an archive) is a kind of file
    // not attached at all, not a Word document that failed: its refusal names what can be.
    if (!docx.ok && docx.reason === 'notDocx')
      throw new ApiError('unsupported_media_type', refusalMessages.unsupported_media_type.attachment);
    throw new ApiError(
      'unsupported_media_type',
      refusalMessages.unsupported_media_type.unreadableDocx(reasonOf(docx, DOCX_REASONS)),
    );
  }
  const counted =
    bytes.byteLength <= TEXT_READ_IN_PROCESS_BYTES ? readText(bytes) : await read('text', bytes);
  if (counted.ok && 'words' in counted) {
    // Valid UTF-8, as the count found: decoding it again is one pass the event loop affords.
    const text = new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes);
    return described(textKind(name), text, null, { words: counted.words, pieces: counted.lines });
  }
  if (!counted.ok && counted.reason === 'binary') return undefined;
  const reason =
    !counted.ok && (counted.reason === 'timeout' || counted.reason === 'memory')
      ? counted.reason
      : 'unreadable';
  throw new ApiError(
    'unsupported_media_type',
    refusalMessages.unsupported_media_type.unreadableText(TEXT_REASONS[reason]),
  );
}

/** Why a document could not be read, as its refusal says it. */
const READ_REASONS = {
  timeout: 'reading it took too long',
  memory: 'reading it needed too much memory',
  text: 'it holds too much text',
} as const;

/** Why a reading failed, in the words its kind has for it (`unreadable`'s for any other reason). */
function reasonOf(
  read: DocumentRead,
  reasons: { unreadable: string } & Partial<Record<string, string>>,
): string {
  return (read.ok ? undefined : reasons[read.reason]) ?? reasons.unreadable;
}

const PDF_REASONS = { ...READ_REASONS, unreadable: 'it is damaged or not a PDF' } as const;
const TEXT_REASONS = { ...READ_REASONS, unreadable: 'it could not be read' } as const;
const DOCX_REASONS = {
  ...READ_REASONS,
  unreadable: 'it is damaged or not a Word document',
  unpacked: `it unpacks to more than ${MAX_DOCX_UNPACKED_BYTES / (1024 * 1024)} MB`,
  parts: `it holds more than ${MAX_DOCX_PARTS.toLocaleString('en-US')} parts`,
} as const;
