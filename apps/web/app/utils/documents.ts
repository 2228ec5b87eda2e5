import {
  attachmentIdOfUrl,
  DOCX_MEDIA_TYPE,
  documentCutText,
  documentDetail,
  isDocumentMediaType,
  type MessageDocument,
} from '@chat/contracts';

export function isDocument(mediaType: string | undefined): boolean {
  return mediaType !== undefined && isDocumentMediaType(mediaType);
}

// One home for its wording, in the contracts: the Markdown export names documents the same way.
export { documentDetail };

/** Its icon: a page of prose (a PDF, a Word document), or a page of text and code. */
export function documentIcon(mediaType: string | undefined): string {
  return mediaType === 'application/pdf' || mediaType === DOCX_MEDIA_TYPE
    ? 'i-lucide-file-text'
    : 'i-lucide-file-code';
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
    // A shared snapshot's part describes itself (its URL is the share's, not an attachment's).
    const described = byId.get(attachmentIdOfUrl(part.url) ?? '') ?? selfDescribed(part);
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

/** The size and pages a shared document part carries (a snapshot keeps what its chip shows). */
function selfDescribed(part: { [key: string]: unknown }): Omit<MessageDocument, 'id'> | undefined {
  if (typeof part.size !== 'number') return undefined;
  return { size: part.size, ...(typeof part.pages === 'number' ? { pages: part.pages } : {}) };
}
