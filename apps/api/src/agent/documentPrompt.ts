/**
 * How a document's text reaches the model (D1): one text part per document, opened and closed by a
 * tag that names it, with a note inside when only part of it fit the budget. One home for the
 * format, so the context that writes it and the built-in local model that reads it back agree.
 */

export interface DocumentPrompt {
  name: string;
  mediaType: string;
  /** A PDF's page count. */
  pages?: number;
  /** The text the model reads (possibly cut). */
  text: string;
  /** What was cut, as the model and a person read it (`pages 1-40 of 120 were read`). */
  cut?: string;
}

const OPEN = /^<document name="([^"]*)" type="([^"]*)"(?: pages="(\d+)")?>\n/;
const CUT = /\n\[Only part of this document fit: ([^\]]+)\.\]\n<\/document>$/;
const CLOSE = '\n</document>';

export function documentPromptText(document: DocumentPrompt): string {
  const pages = document.pages === undefined ? '' : ` pages="${document.pages}"`;
  const cut = document.cut ? `\n[Only part of this document fit: ${document.cut}.]` : '';
  return `<document name="${document.name.replaceAll('"', '')}" type="${document.mediaType}"${pages}>\n${document.text}${cut}${CLOSE}`;
}

/** A document part read back; undefined for any other text. */
export function parseDocumentPrompt(text: string): DocumentPrompt | undefined {
  const open = OPEN.exec(text);
  if (!open || !text.endsWith(CLOSE)) return undefined;
  const cut = CUT.exec(text);
  const end = cut ? text.length - cut[0].length : text.length - CLOSE.length;
  return {
    name: open[1] ?? '',
    mediaType: open[2] ?? '',
    ...(open[3] ? { pages: Number(open[3]) } : {}),
    text: text.slice(open[0].length, Math.max(open[0].length, end)),
    ...(cut?.[1] ? { cut: cut[1] } : {}),
  };
}

/** A document the model gets no text of (older than what the budget held, or gone). */
export function documentNotReadText(name: string, why: string): string {
  return `[document ${name.replaceAll('"', '')}: not read, ${why}]`;
}

export const DOCUMENT_NOT_AVAILABLE = '[document not available]';
