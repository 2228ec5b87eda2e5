const MAX_TITLE_LENGTH = 60;

/**
 * A thread's title from its first message: the first line as plain text (Markdown marks and
 * local-model directives dropped), cut at a word near 60 characters.
 */
export function titleFromMessage(text: string): string {
  const firstLine = text
    .replace(/\[\[[^\]]*\]\]/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '')
    .replace(/[*`~]+/g, '')
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.length > 0);
  const line = (firstLine ?? 'New chat').replace(/\s+/g, ' ');
  if (line.length <= MAX_TITLE_LENGTH) return line;
  const cut = line.slice(0, MAX_TITLE_LENGTH);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > 20 ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
}
