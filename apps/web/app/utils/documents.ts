import {
  type Attachment,
  attachmentIdOfUrl,
  DOCX_MEDIA_TYPE,
  documentCutText,
  isDocumentMediaType,
  type MessageDocument,
} from '@chat/contracts';

/** The kind of a document as a person reads it. */
const KINDS: Record<string, string> = {
  'application/pdf': 'PDF',
  [DOCX_MEDIA_TYPE]: 'Word',
  'text/plain': 'Text',
  'text/markdown': 'Markdown',
  'text/csv': 'CSV',
  'application/json': 'JSON',
};

export function isDocument(mediaType: string | undefined): boolean {
  return mediaType !== undefined && isDocumentMediaType(mediaType);
}

export function documentKind(mediaType: string): string {
  return KINDS[mediaType] ?? 'File';
}

/** Its icon: a page of prose (a PDF, a Word document), or a page of text and code. */
export function documentIcon(mediaType: string | undefined): string {
  return mediaType === 'application/pdf' || mediaType === DOCX_MEDIA_TYPE
    ? 'i-lucide-file-text'
    : 'i-lucide-file-code';
}

export function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const counts = new Intl.NumberFormat('en-US');

/**
 * `PDF · 12 pages`, `Word · 1,200 words`, `Markdown · 2.1 KB`, or just the kind when nothing more is
 * known. A Word document says its words: its size (a zip, often mostly images) says little of its text.
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

/** A document chip of a sent message in the transcript. */
export interface MessageDocumentChip {
  url: string;
  name: string;
  mediaType: string;
  /** `PDF · 12 pages`, `Word · 800 words`, `Markdown · 3.4 KB` (just the kind while the message's description is not known). */
  detail: string;
  /** When the model read only part of it as the message ran: `Pages 1-40 of 120 were read`. */
  cut?: string;
}

/**
 * The document chips of a sent message: its file parts that are documents, described by what the
 * message's metadata says of each (pages or size, and a cut).
 */
export function messageDocumentChips(
  parts: readonly { type: string; [key: string]: unknown }[],
  documents: readonly MessageDocument[] = [],
): MessageDocumentChip[] {
  const byId = new Map(documents.map((document) => [document.id, document]));
  return parts.flatMap((part) => {
    const mediaType = String(part.mediaType);
    if (part.type !== 'file' || typeof part.url !== 'string' || !isDocument(mediaType)) return [];
    const described = byId.get(attachmentIdOfUrl(part.url) ?? '');
    const cut = described?.cut ? documentCutText(described.cut) : undefined;
    return [
      {
        url: part.url,
        name: (part.filename as string | undefined) ?? 'Document',
        mediaType,
        detail: documentDetail({
          mediaType,
          ...(described ? { pages: described.pages, size: described.size, words: described.words } : {}),
        }),
        ...(cut ? { cut: `${cut.charAt(0).toUpperCase()}${cut.slice(1)}` } : {}),
      },
    ];
  });
}
