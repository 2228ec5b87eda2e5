/**
 * Headers on every API response, refusals included. The API serves JSON and event streams, never
 * a page: nothing may frame, sniff or render it as a document.
 */
export const API_SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
};

export function applySecurityHeaders(headers: Headers): void {
  for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) headers.set(name, value);
  headers.delete('x-powered-by');
}
