import { z } from 'zod';
import { MAX_ATTACHMENTS_PER_MESSAGE } from './limits';

/**
 * Images attached to messages. History holds references (a file part whose URL is the media
 * route), never the bytes: the bytes are stored once and served by id.
 */

/** The image kinds accepted, recognised by their bytes (never by a name or declared type). */
export const imageMediaTypes = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type ImageMediaType = (typeof imageMediaTypes)[number];

/** A Word document (DOCX): a zip whose `[Content_Types].xml` names a Word document's main part. */
export const DOCX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * The document kinds accepted (D1). A PDF is recognised by its header, a Word document (DOCX) by
 * being a zip that says it is one; anything else that is valid UTF-8 without a NUL byte is text,
 * and only then does its name choose which kind of text (`.md` Markdown, `.csv` CSV, `.json`
 * JSON, any other name, source code included, plain text).
 */
export const documentMediaTypes = [
  'application/pdf',
  DOCX_MEDIA_TYPE,
  'text/plain',
  'text/markdown',
  'text/csv',
  'application/json',
] as const;
export type DocumentMediaType = (typeof documentMediaTypes)[number];

export const attachmentMediaTypes = [...imageMediaTypes, ...documentMediaTypes] as const;
export type AttachmentMediaType = (typeof attachmentMediaTypes)[number];

/**
 * What a file picker offers: the image kinds, PDF, Word (DOCX), text of any kind, and the names of common text
 * and source-code files a system may not call text (`.ts` is "video/mp2t" to some). The server
 * decides by the bytes whatever is picked.
 */
export const attachmentAccept = [
  ...imageMediaTypes,
  'application/pdf',
  DOCX_MEDIA_TYPE,
  'text/*',
  ...[
    'docx',
    'md',
    'markdown',
    'csv',
    'json',
    'txt',
    'log',
    'yaml',
    'yml',
    'toml',
    'xml',
    'html',
    'css',
    'sql',
    'sh',
  ]
    .concat([
      'ts',
      'tsx',
      'js',
      'jsx',
      'mjs',
      'vue',
      'py',
      'rb',
      'go',
      'rs',
      'java',
      'kt',
      'c',
      'h',
      'cpp',
      'cs',
      'php',
      'swift',
    ])
    .map((extension) => `.${extension}`),
].join(',');

export function isDocumentMediaType(mediaType: string): mediaType is DocumentMediaType {
  return (documentMediaTypes as readonly string[]).includes(mediaType);
}

/**
 * One uploaded image or document, as the API describes it. A document has no pixels (`width` and
 * `height` are 0); it says how many words its text holds and, for a PDF, how many pages.
 */
export interface Attachment {
  id: string;
  name: string;
  mediaType: AttachmentMediaType;
  size: number;
  width: number;
  height: number;
  /** A PDF's page count. */
  pages?: number;
  /** How many words a document's extracted text holds. */
  words?: number;
}

/** An attachment that is an image. */
export type ImageAttachment = Attachment & { mediaType: ImageMediaType };

export function isImageAttachment(attachment: Attachment): attachment is ImageAttachment {
  return (imageMediaTypes as readonly string[]).includes(attachment.mediaType);
}

/** An attachment that is a document (D1). */
export type DocumentAttachment = Attachment & { mediaType: DocumentMediaType };

export function isDocumentAttachment(attachment: Attachment): attachment is DocumentAttachment {
  return isDocumentMediaType(attachment.mediaType);
}

/** Counts as a person reads them: `1,200`. */
const counts = new Intl.NumberFormat('en-US');

/** The kind of a document as a person reads it. */
const DOCUMENT_KINDS: Record<string, string> = {
  'application/pdf': 'PDF',
  [DOCX_MEDIA_TYPE]: 'Word',
  'text/plain': 'Text',
  'text/markdown': 'Markdown',
  'text/csv': 'CSV',
  'application/json': 'JSON',
};

export function documentKind(mediaType: string): string {
  return DOCUMENT_KINDS[mediaType] ?? 'File';
}

export function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * `PDF · 12 pages`, `Word · 1,200 words`, `Markdown · 2.1 KB`, or just the kind when nothing more
 * is known: what a document's chip says (composer, Dock, transcript, share) and how a Markdown
 * export names it. A Word document says its words: its size (a zip, often mostly images) says
 * little of its text.
 */
export function documentDetail(
  file: { mediaType: string } & Partial<Pick<Attachment, 'pages' | 'size' | 'words'>>,
): string {
  const kind = documentKind(file.mediaType);
  if (file.pages !== undefined) return `${kind} · ${file.pages} page${file.pages === 1 ? '' : 's'}`;
  if (file.mediaType === DOCX_MEDIA_TYPE && file.words !== undefined)
    return `${kind} · ${counts.format(file.words)} word${file.words === 1 ? '' : 's'}`;
  if (file.size !== undefined) return `${kind} · ${sizeLabel(file.size)}`;
  return kind;
}

/**
 * How much of a document the model read when its message ran, when that was not all of it (D1):
 * `read` of `of` pages (a PDF) or lines (any other text), from the first.
 */
export interface DocumentCut {
  read: number;
  of: number;
  unit: 'pages' | 'lines';
}

/**
 * A cut in words, the same for the model's note and the person's: `pages 1-40 of 120 were read`,
 * or `none of its 120 pages were read`.
 */
export function documentCutText(cut: DocumentCut): string {
  if (cut.read === 0) return `none of its ${counts.format(cut.of)} ${cut.unit} were read`;
  return `${cut.unit} 1-${counts.format(cut.read)} of ${counts.format(cut.of)} were read`;
}

/** `POST /api/threads/:id/attachments` answers `201 { attachment }`. */
export interface AttachmentAnswer {
  attachment: Attachment;
}

/** The ids a send or an edit carries: at most four distinct uploads of the same thread. */
export const attachmentIds = z
  .array(z.uuid())
  .max(MAX_ATTACHMENTS_PER_MESSAGE)
  .refine((ids) => new Set(ids).size === ids.length, 'Each attachment may be named once.');

/** Where the owner reads an image's bytes: the URL a stored file part carries. */
export function mediaUrl(attachmentId: string): string {
  return `/api/media/${attachmentId}`;
}

/** The attachment id of a media URL (`/api/media/:id`), or undefined for any other URL. */
export function attachmentIdOfUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  const match = /^\/api\/media\/([0-9a-f-]{36})$/i.exec(url);
  return match?.[1];
}

/** Where a share's reader reads an image of the snapshot; it stops working when the share is revoked. */
export function sharedMediaUrl(token: string, attachmentId: string): string {
  return `/api/shares/${token}/media/${attachmentId}`;
}
