import type { IncomingMessage, ServerResponse } from 'node:http';

/** Connection-level headers: they describe one hop, never the request or response itself. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
  'content-length',
]);

/** The browser's request headers for the API, plus where the request really came from. */
export function upstreamRequestHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const client = req.socket.remoteAddress;
  if (client) {
    const before = req.headers['x-forwarded-for'];
    headers.set('x-forwarded-for', before ? `${before}, ${client}` : client);
  }
  if (req.headers.host) headers.set('x-forwarded-host', req.headers.host);
  headers.set('x-forwarded-proto', 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http');
  return headers;
}

/** Copies the API's status and headers (every Set-Cookie kept) onto the browser's response. */
export function writeUpstreamHead(res: ServerResponse, upstream: Response): void {
  res.statusCode = upstream.status;
  for (const [name, value] of upstream.headers) {
    // fetch already decoded the body, so its encoding and length no longer apply.
    if (HOP_BY_HOP.has(name) || name === 'content-encoding' || name === 'set-cookie') continue;
    res.setHeader(name, value);
  }
  const cookies = upstream.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  // Headers go out now: an SSE client learns the stream is open before the first event.
  res.flushHeaders();
}

/**
 * Writes the API's body through chunk by chunk (SSE included), waiting when the browser reads
 * slowly. When the API's side breaks (the process died, the connection reset) the browser's
 * connection is destroyed at once, so a page sees its stream fail and can reconnect, instead of
 * an open response that never ends.
 */
export async function pipeUpstreamBody(res: ServerResponse, body: ReadableStream<Uint8Array> | null) {
  if (!body) {
    res.end();
    return;
  }
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
    res.end();
  } catch {
    res.destroy();
  }
}
