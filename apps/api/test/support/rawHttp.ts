import { request } from 'node:http';

export interface EndlessBodyResult {
  status: number;
  body: string;
  /** Bytes written before the answer came. */
  sent: number;
}

/**
 * POSTs a chunked body that never ends (1 MiB chunks, up to `maxBytes`) and resolves with the
 * answer. A server that reads the whole body before answering never answers within `maxBytes`:
 * the promise then rejects.
 */
export function postEndlessBody(
  url: string,
  headers: Record<string, string>,
  maxBytes = 64 * 1024 * 1024,
): Promise<EndlessBodyResult> {
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } });
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (data: string) => {
        body += data;
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body, sent });
        req.destroy();
      });
    });
    // The server closing the connection mid-upload is expected once it answered.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const write = () => {
      while (!answered && !req.destroyed) {
        if (sent >= maxBytes) {
          reject(new Error(`no answer after ${sent} bytes`));
          req.destroy();
          return;
        }
        sent += chunk.byteLength;
        if (!req.write(chunk)) {
          req.once('drain', write);
          return;
        }
      }
    };
    write();
  });
}

/**
 * POSTs a body of `totalBytes` with its length declared up front (as a browser's upload does),
 * written 256 KiB at a time, and resolves with the answer and how much was written before it.
 */
export function postDeclaredBody(
  url: string,
  headers: Record<string, string>,
  totalBytes: number,
): Promise<EndlessBodyResult> {
  const chunk = Buffer.alloc(256 * 1024, 'b');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(totalBytes) },
    });
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (data: string) => {
        body += data;
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body, sent });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const write = () => {
      while (!answered && !req.destroyed && sent < totalBytes) {
        const piece = chunk.subarray(0, Math.min(chunk.byteLength, totalBytes - sent));
        sent += piece.byteLength;
        if (!req.write(piece)) {
          req.once('drain', write);
          return;
        }
      }
      if (sent >= totalBytes && !answered) req.end();
    };
    write();
  });
}
