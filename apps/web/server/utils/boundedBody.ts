import type { IncomingMessage } from 'node:http';

export type BoundedBody =
  | { ok: true; bytes: Uint8Array<ArrayBuffer> | undefined }
  | { ok: false; reason: 'too_large' | 'aborted' };

/**
 * Reads a request body, counting bytes as they arrive and stopping at `limit`: a chunked upload
 * of any size holds at most `limit` bytes here (the declared length is checked first, so an
 * honest oversized request is refused before any byte is read). After a `too_large` the rest is
 * left unread; the caller answers and closes the connection.
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<BoundedBody> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.resolve({ ok: false, reason: 'too_large' });
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
        req.pause();
        finish({ ok: false, reason: 'too_large' });
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
