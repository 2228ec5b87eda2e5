import { request } from 'node:http';
import { connect } from 'node:net';

export interface EndlessBodyResult {
  status: number;
  body: string;
  /** Bytes written before the answer came. */
  sent: number;
}

/**
 * POSTs a body written `chunkBytes` at a time until the server answers, and resolves with the
 * answer and how much was written before it. `total`: the body's declared length (it ends there);
 * without it the body is chunked and never ends: past `maxBytes` unanswered, the promise rejects.
 */
function postUntilAnswered(
  url: string,
  headers: Record<string, string>,
  options: { chunkBytes: number; total?: number; maxBytes?: number },
): Promise<EndlessBodyResult> {
  const { chunkBytes, total, maxBytes = Number.POSITIVE_INFINITY } = options;
  const chunk = Buffer.alloc(chunkBytes, 'a');
  const framing =
    total === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(total) };
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, { method: 'POST', headers: { ...headers, ...framing } });
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
      while (!answered && !req.destroyed && (total === undefined || sent < total)) {
        if (sent >= maxBytes) {
          reject(new Error(`no answer after ${sent} bytes`));
          req.destroy();
          return;
        }
        const piece = total === undefined ? chunk : chunk.subarray(0, Math.min(chunkBytes, total - sent));
        sent += piece.byteLength;
        if (!req.write(piece)) {
          req.once('drain', write);
          return;
        }
      }
      if (total !== undefined && sent >= total && !answered) req.end();
    };
    write();
  });
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
  return postUntilAnswered(url, headers, { chunkBytes: 1024 * 1024, maxBytes });
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
  return postUntilAnswered(url, headers, { chunkBytes: 256 * 1024, total: totalBytes });
}

export interface RawAnswer {
  status: number;
  body: string;
}

/**
 * One request written byte for byte on a socket, so the target is exactly `target` (fetch and
 * node:http resolve dot segments, or refuse NUL, before anything is sent). `Connection: close`; the
 * answer is read to the end.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const lines = [
    `${method} ${target} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    'connection: close',
    ...Object.entries({
      ...headers,
      ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
    }).map(([name, value]) => `${name}: ${value}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
    });
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      received += data;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      const at = received.indexOf('\r\n\r\n');
      let answer = at < 0 ? '' : received.slice(at + 4);
      if (/\r\ntransfer-encoding: chunked\r\n/i.test(`${received.slice(0, at)}\r\n`))
        answer = unchunk(answer);
      resolve({ status, body: Buffer.from(answer, 'latin1').toString('utf8') });
    });
  });
}

function unchunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, lineEnd), 16);
    if (!size) return out;
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

/**
 * POSTs `body` with its length declared, 64 KiB at a time, and resolves with the answer and how
 * much was written before it came (the writing stops once it has).
 */
export function postBytes(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<EndlessBodyResult> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(body.byteLength) },
    });
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (data: string) => {
        text += data;
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: text, sent });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const write = () => {
      while (!answered && !req.destroyed && sent < body.byteLength) {
        const piece = body.subarray(sent, Math.min(sent + 64 * 1024, body.byteLength));
        sent += piece.byteLength;
        if (!req.write(piece)) {
          req.once('drain', write);
          return;
        }
      }
      if (sent >= body.byteLength && !answered) req.end();
    };
    write();
  });
}
