import {
  MAX_ATTACHMENT_BYTES,
  MAX_JSON_BODY_BYTES,
  refusalMessages,
  unsafeRequestUrlReason,
} from '@chat/contracts';
import { readBoundedBody } from '../utils/boundedBody';
import { abandon, refuse } from '../utils/refusal';
import { pipeUpstreamBody, upstreamRequestHeaders, writeUpstreamHead } from '../utils/upstream';

/** The one route whose body is not JSON: an image upload (multipart, one file). */
const UPLOAD_PATH = /^\/api\/threads\/[^/?#]+\/attachments(?:\?.*)?$/;
const UPLOAD_LIMIT = MAX_ATTACHMENT_BYTES + 64 * 1024;

/** The methods the API serves. Anything else (TRACE, CONNECT, made-up ones) stops here. */
const FORWARDED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Proxies every /api/** request to the API (runtimeConfig.apiOrigin, env NUXT_API_ORIGIN).
 *
 * A server route rather than a routeRules proxy because: the target is read at run time, and a
 * client disconnect aborts the upstream fetch (an SSE subscriber that goes away must not keep an
 * API connection open). On the way it:
 * - forwards the path exactly as received, and refuses one whose meaning could change in transit
 *   (dot segments, NUL, backslash) with `400 bad_request`;
 * - refuses methods the API does not serve with `405 method_not_allowed`;
 * - reads the request body counting bytes (bodies are JSON, at most MAX_JSON_BODY_BYTES; an image
 *   upload, at most MAX_ATTACHMENT_BYTES and its multipart framing) and answers `413 too_large` at
 *   the limit, without reading the rest;
 * - writes responses, SSE included, through chunk by chunk, and breaks the browser's connection
 *   when the API's breaks; an unreachable API is `503 unavailable`.
 * Cookies pass both ways untouched.
 */
export default defineEventHandler(async (event) => {
  const { req, res } = event.node;
  const rawUrl = req.url ?? '/';
  const method = (req.method ?? 'GET').toUpperCase();
  if (!FORWARDED_METHODS.has(method))
    return refuse(event, 'method_not_allowed', { headers: { allow: [...FORWARDED_METHODS].join(', ') } });
  const unforwardable = unsafeRequestUrlReason(rawUrl);
  if (unforwardable) return refuse(event, 'bad_request', { message: unforwardable });

  let body: Uint8Array<ArrayBuffer> | undefined;
  if (method !== 'GET' && method !== 'HEAD') {
    const upload = method === 'POST' && UPLOAD_PATH.test(rawUrl);
    const read = await readBoundedBody(req, upload ? UPLOAD_LIMIT : MAX_JSON_BODY_BYTES);
    if (!read.ok) {
      if (read.reason === 'aborted') return abandon(event);
      // The rest of the body is thrown away as it comes (boundedBody.ts), so the client reads this.
      return refuse(event, 'too_large', {
        message: upload ? refusalMessages.too_large.image : refusalMessages.too_large.body,
      });
    }
    body = read.bytes;
  }

  const upstream = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) upstream.abort();
  });
  const { apiOrigin } = useRuntimeConfig(event);
  let response: Response;
  try {
    // String concatenation, not new URL(path, origin): the path goes exactly as it came.
    response = await fetch(`${apiOrigin.replace(/\/+$/, '')}${rawUrl}`, {
      method,
      headers: upstreamRequestHeaders(req),
      body,
      redirect: 'manual',
      signal: upstream.signal,
    });
  } catch {
    // The browser went away first: nothing is left to answer.
    if (upstream.signal.aborted) return abandon(event);
    return refuse(event, 'unavailable', {
      message: refusalMessages.unavailable.api,
      headers: { 'retry-after': '2' },
    });
  }
  writeUpstreamHead(res, response);
  await pipeUpstreamBody(res, response.body);
});
