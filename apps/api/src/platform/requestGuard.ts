import { refusalMessages, unsafeRequestUrlReason } from '@chat/contracts';
import type { H3Event } from 'h3';
import { ApiError } from './errors';
import { readRequestBody } from './requestBody';
import { applySecurityHeaders } from './securityHeaders';

/** Methods that change something: a page on another site must not be able to send them. */
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The routes that read their own body, not JSON: an image upload is multipart, bounded by its own
 * limit as it arrives (`platform/multipartBody.ts`). The origin check still applies to them.
 */
const OWN_BODY_ROUTES = [/^\/api\/threads\/[^/]+\/attachments\/?$/];

/**
 * The app-level middleware every request passes, before any route (better-auth's included):
 * - security headers on the response;
 * - an address whose meaning could change on the way (dot segments in any spelling, a backslash,
 *   NUL, malformed percent-encoding) is refused with `400 bad_request`, judged on the request line
 *   as it arrived: h3 routes on a parsed URL, in which `/queue/..` already became the thread;
 * - unsafe methods need `Origin` to be a trusted origin, or `Sec-Fetch-Site: same-origin`
 *   (`403 forbidden_origin`): a form or a `no-cors` fetch from another site is refused;
 * - their body, if any, must be `application/json` (`415 unsupported_media_type`), is counted as
 *   it arrives (`413 too_large`) and must be storable JSON (`400 bad_request`), see requestBody.ts;
 *   an image upload (`OWN_BODY_ROUTES`) reads its multipart body itself, with its own bound.
 */
export function requestGuard(trustedOrigins: readonly string[]) {
  const trusted = new Set(trustedOrigins);
  return async (event: H3Event, next: () => unknown) => {
    applySecurityHeaders(event.res.headers);
    const unsafeUrl = unsafeRequestUrlReason(rawRequestUrl(event));
    if (unsafeUrl) throw new ApiError('bad_request', unsafeUrl);
    if (!UNSAFE_METHODS.has(event.req.method)) return await next();
    assertTrustedOrigin(event.req.headers, trusted);
    if (event.req.method === 'POST' && OWN_BODY_ROUTES.some((route) => route.test(event.url.pathname))) {
      return await next();
    }
    assertJsonMediaType(event.req.headers);
    await readRequestBody(event);
    return await next();
  };
}

/** The request target as the client wrote it (Node's own request), else the parsed one. */
function rawRequestUrl(event: H3Event): string {
  return event.runtime?.node?.req.url ?? `${event.url.pathname}${event.url.search}`;
}

function assertTrustedOrigin(headers: Headers, trusted: Set<string>): void {
  const origin = headers.get('origin');
  if (origin !== null && trusted.has(origin)) return;
  // Browsers set this header themselves; no page can forge it.
  if (headers.get('sec-fetch-site') === 'same-origin') return;
  throw new ApiError('forbidden_origin');
}

function assertJsonMediaType(headers: Headers): void {
  const type = headers.get('content-type');
  if (type === null) {
    // A request without a body needs no type (Stop, a claim, a delete).
    const hasBody = Number(headers.get('content-length') ?? 0) > 0 || headers.has('transfer-encoding');
    if (!hasBody) return;
  } else if (isJson(type)) return;
  throw new ApiError('unsupported_media_type', refusalMessages.unsupported_media_type.json);
}

function isJson(contentType: string): boolean {
  const [essence, ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  if (essence !== 'application/json') return false;
  const charset = parameters.find((parameter) => parameter.startsWith('charset='));
  return !charset || /^charset="?utf-8"?$/.test(charset);
}
