import { type Attachment, isDocumentMediaType } from '@chat/contracts';

/** The kind of a document as a person reads it. */
const KINDS: Record<string, string> = {
  'application/pdf': 'PDF',
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

export function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** `PDF · 12 pages`, `Markdown · 2.1 KB`, or just the kind when nothing more is known. */
export function documentDetail(
  file: { mediaType: string } & Partial<Pick<Attachment, 'pages' | 'size'>>,
): string {
  const kind = documentKind(file.mediaType);
  if (file.pages !== undefined) return `${kind} · ${file.pages} page${file.pages === 1 ? '' : 's'}`;
  if (file.size !== undefined) return `${kind} · ${sizeLabel(file.size)}`;
  return kind;
}
