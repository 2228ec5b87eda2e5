const SNIPPET_CHARS = 90;

/**
 * A short excerpt of `text` around the first case-insensitive match of `query`, on one line,
 * with an ellipsis where it was cut; for search results.
 */
export function snippetAround(text: string, query: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const at = line.toLowerCase().indexOf(query.toLowerCase());
  if (line.length <= SNIPPET_CHARS) return line;
  const start = Math.max(0, Math.min(at < 0 ? 0 : at - 30, line.length - SNIPPET_CHARS));
  const end = start + SNIPPET_CHARS;
  return `${start > 0 ? '…' : ''}${line.slice(start, end).trim()}${end < line.length ? '…' : ''}`;
}
