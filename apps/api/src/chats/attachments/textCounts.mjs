// What makes bytes a text document and what is counted of it (D1), in plain JavaScript so that
// both the API (small texts, in process) and the reading process (large ones, `documentReader.mjs`)
// run this one rule.

/**
 * Whether the bytes are text (valid UTF-8 without a NUL byte, which a binary file almost always
 * has), and if so its words (runs of non-blanks) and lines (its line breaks and one).
 */
export function readText(bytes) {
  if (bytes.includes(0)) return { ok: false, reason: 'binary' };
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { ok: false, reason: 'binary' };
  }
  return { ok: true, words: countWords(text), lines: countBreaks(text, '\n') + 1 };
}

/** Runs of non-blanks, counted without holding them all at once. */
export function countWords(text) {
  let words = 0;
  for (const _ of text.matchAll(/\S+/g)) words += 1;
  return words;
}

/** How often `at` stands in `text` (a document's pieces are its breaks and one, D1). */
export function countBreaks(text, at) {
  let breaks = 0;
  for (let index = text.indexOf(at); index >= 0; index = text.indexOf(at, index + 1)) breaks += 1;
  return breaks;
}
