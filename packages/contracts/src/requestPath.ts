/**
 * Why a request URL (as it arrived, before any parsing) must be refused with `400 bad_request`, or
 * `undefined` when it may be served as it is. One rule for the API's own port and the web app's
 * proxy in front of it.
 *
 * Anything that would let the path mean something else on the way is refused: dot segments in any
 * spelling (`..`, `%2e%2e`, `.%2E`), because URL parsers resolve them (`/threads/<id>/queue/..`
 * became `DELETE /threads/<id>`); NUL anywhere, query included, because servers and databases cut
 * strings at it; a backslash, which URL parsers turn into `/`; malformed percent-encoding.
 */
export function unsafeRequestUrlReason(rawUrl: string): string | undefined {
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
