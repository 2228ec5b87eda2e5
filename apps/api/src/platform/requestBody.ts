import { MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH, refusalMessages, unstorableTextReason } from '@chat/contracts';
import type { H3Event } from 'h3';
import { ApiError } from './errors';

/**
 * A request body as the guard read it: the bytes (for better-auth, which reads the body itself) and
 * the parsed JSON (for `readJson`). Kept per request, outside h3's untyped context.
 */
interface ReadBody {
  bytes: Uint8Array<ArrayBuffer>;
  json: unknown;
}

const bodies = new WeakMap<H3Event, ReadBody>();

export const tooLarge = () => new ApiError('too_large', refusalMessages.too_large.body);

/**
 * After a refusal part way through a body, at most this much more of it is read (and thrown away)
 * for at most this long, with at most this long between two chunks, before the connection is cut.
 * A client that writes its whole body before it reads the answer (Node's fetch, browsers' fetch)
 * then gets the answer; cut at once, it sees only a broken connection (EPIPE). nginx calls this a
 * lingering close.
 */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;
const LINGER_MAX_MS = 30_000;
const LINGER_IDLE_MS = 5_000;

/**
 * Reads the rest of a refused body in the background and throws it away, within the linger
 * bounds; past them, or when the client stops sending, the connection is cut. Resolves when the
 * rest is read or cut (it never rejects); the refusal is answered meanwhile (`refuseRest`).
 */
export function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const startedAt = Date.now();
  let discarded = 0;
  let idle: NodeJS.Timeout | undefined;
  const cut = () => void reader.cancel().catch(() => {});
  return (async () => {
    try {
      for (;;) {
        idle = setTimeout(cut, LINGER_IDLE_MS);
        const { done, value } = await reader.read();
        clearTimeout(idle);
        if (done) return;
        discarded += value.byteLength;
        if (discarded > LINGER_MAX_BYTES || Date.now() - startedAt > LINGER_MAX_MS) return cut();
        // Throwing bytes away is cheap, but not free: other requests go first.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch {
      // The client went away, or the cut above ended the read.
    } finally {
      clearTimeout(idle);
    }
  })();
}

/** The body of a request refused before a byte was read: thrown away, within the linger bounds. */
export function discardBody(body: ReadableStream<Uint8Array> | null): Promise<void> {
  return body && !body.locked ? discardRest(body.getReader()) : Promise.resolve();
}

/**
 * Throws `refusal` once the client can read it. On a connection kept open it is answered at once,
 * the rest of the body thrown away meanwhile (`discarding`). A client that asked for the connection
 * to be closed after the answer (`Connection: close`) gets it only once the rest is read (within
 * the linger bounds): the server closes such a connection as soon as its answer is written, and a
 * client still writing its body (curl, simple clients) would meet a broken pipe, not the answer.
 */
export async function refuseRest(
  event: H3Event,
  discarding: Promise<void>,
  refusal: ApiError,
): Promise<never> {
  if (/(^|,)\s*close\s*(,|$)/i.test(event.req.headers.get('connection') ?? '')) await discarding;
  throw refusal;
}

/**
 * Reads the body counting bytes as they arrive and stops at MAX_JSON_BODY_BYTES (`413 too_large`,
 * the rest never read, chunked bodies included); then requires UTF-8 JSON whose strings can be
 * stored as sent (no U+0000, no lone surrogate): `400 bad_request` otherwise. Every unsafe request
 * goes through here once (the request guard), so every route, auth included, is bounded.
 */
export async function readRequestBody(event: H3Event): Promise<void> {
  await readJsonBody(event, MAX_JSON_BODY_BYTES, tooLarge);
}

/**
 * The same for a route that takes a larger JSON body (an import): read by the route itself, after
 * it has a slot to read it in, bounded by `limit` (`refusal` past it), checked the same way.
 */
export async function readJsonBody(event: H3Event, limit: number, refusal: () => ApiError): Promise<void> {
  const declared = Number(event.req.headers.get('content-length') ?? 0);
  if (declared > limit) await refuseRest(event, discardBody(event.req.body), refusal());
  const bytes = await readBounded(event, limit, refusal);
  bodies.set(event, { bytes, json: parseJson(bytes) });
}

/** The JSON body the guard read; `{}` for a request without one. */
export function jsonBodyOf(event: H3Event): unknown {
  const read = bodies.get(event);
  // A JSON `null` is a body, and no route takes it: only a missing body counts as `{}`.
  return read ? read.json : {};
}

/** The request as it arrived, with the body the guard already read put back (for better-auth). */
export function requestWithBody(event: H3Event): Request {
  const read = bodies.get(event);
  if (!read) return event.req;
  return new Request(event.req.url, {
    method: event.req.method,
    headers: event.req.headers,
    body: read.bytes.byteLength > 0 ? read.bytes : undefined,
    signal: event.req.signal,
  });
}

/**
 * Reads a body counting bytes as they arrive; past `limit` it stops keeping them (`413 too_large`;
 * the rest is thrown away as it comes, `discardRest`).
 */
async function readBounded(
  event: H3Event,
  limit: number,
  refusal: () => ApiError,
): Promise<Uint8Array<ArrayBuffer>> {
  const body = event.req.body;
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) await refuseRest(event, discardRest(reader), refusal());
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Uint8Array): unknown {
  let raw: string;
  try {
    raw = utf8.decode(bytes);
  } catch {
    throw new ApiError('bad_request', refusalMessages.bad_request.notUtf8);
  }
  if (raw.trim() === '') return {};
  if (nestingExceeds(raw, MAX_JSON_DEPTH)) {
    throw new ApiError('bad_request', refusalMessages.bad_request.nestedTooDeep);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ApiError('bad_request', refusalMessages.bad_request.notJson);
  }
  assertStorableStrings(json);
  return json;
}

/** Whether arrays and objects in `raw` nest deeper than `max`, counted before anything parses it. */
function nestingExceeds(raw: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < raw.length; index++) {
    const char = raw.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index += 1; // a backslash escapes the next character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) {
      depth += 1;
      if (depth > max) return true;
    } else if (char === 0x5d || char === 0x7d) depth -= 1;
  }
  return false;
}

/** Every string in the body, keys included, walked without recursion (nesting can be deep). */
function assertStorableStrings(json: unknown): void {
  const pending: unknown[] = [json];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      const reason = unstorableTextReason(value);
      if (reason) throw new ApiError('bad_request', refusalMessages.bad_request.unstorableText(reason));
    } else if (Array.isArray(value)) {
      pending.push(...value);
    } else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) pending.push(key, inner);
    }
  }
}
