import type { IncomingMessage } from 'node:http';

export type BoundedBody =
  | { ok: true; bytes: Uint8Array<ArrayBuffer> | undefined }
  | { ok: false; reason: 'too_large' | 'aborted' };

/**
 * Reads a request body, counting bytes as they arrive and stopping at `limit`: a chunked upload
 * of any size holds at most `limit` bytes here (the declared length is checked first, so an
 * honest oversized request is refused before any byte is kept). After a `too_large` the rest is
 * read and thrown away within bounds (`discardRest`) while the caller answers.
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<BoundedBody> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    discardRest(req);
    return Promise.resolve({ ok: false, reason: 'too_large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BoundedBody) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('aborted', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        finish({ ok: false, reason: 'too_large' });
        discardRest(req);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () =>
      finish({ ok: true, bytes: size === 0 ? undefined : new Uint8Array(Buffer.concat(chunks, size)) });
    const onAbort = () => finish({ ok: false, reason: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
  });
}

/**
 * After a refusal part way through a body, at most this much more is read (and thrown away) for
 * at most this long before the connection is cut, as the API does (its `platform/requestBody.ts`):
 * a client that writes its whole body before reading the answer (fetch) then gets the answer
 * instead of a broken connection. nginx calls this a lingering close.
 */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;
const LINGER_MAX_MS = 30_000;
const LINGER_IDLE_MS = 5_000;

function discardRest(req: IncomingMessage): void {
  let discarded = 0;
  const cut = () => req.destroy();
  const total = setTimeout(cut, LINGER_MAX_MS);
  let idle = setTimeout(cut, LINGER_IDLE_MS);
  const stop = () => {
    clearTimeout(total);
    clearTimeout(idle);
  };
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    clearTimeout(idle);
    idle = setTimeout(cut, LINGER_IDLE_MS);
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  req.once('end', stop);
  req.once('close', stop);
  req.resume();
}
