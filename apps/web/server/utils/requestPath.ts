/**
 * Why a request URL must not be forwarded to the API, or `undefined` when it may go as it is.
 *
 * Anything that would let the path mean something else on the way is refused: dot segments in any
 * spelling (`..`, `%2e%2e`, `.%2E`), because URL parsers resolve them (`/threads/<id>/queue/..`
 * became `DELETE /threads/<id>`); NUL anywhere, because servers cut strings at it; a backslash,
 * which URL parsers turn into `/`; malformed percent-encoding.
 */
export function unforwardableReason(rawUrl: string): string | undefined {
  if (rawUrl.includes('\0') || /%00/i.test(rawUrl)) return 'The address contains a NUL character.';
  const path = pathOf(rawUrl);
  if (path.includes('\\')) return 'The address contains a backslash.';
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return 'The address has malformed percent-encoding.';
    }
    if (decoded.split(/[/\\]/).some((part) => part === '.' || part === '..'))
      return 'The address contains a dot segment.';
  }
  return undefined;
}

/** The path of a raw request URL, without its query. */
export function pathOf(rawUrl: string): string {
  const queryAt = rawUrl.indexOf('?');
  return queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
}
