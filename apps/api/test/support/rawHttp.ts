import { request } from 'node:http';
import { connect } from 'node:net';

export interface EndlessBodyResult {
  status: number;
  body: string;
  /** Bytes written before the answer came. */
  sent: number;
}

/** How long a writer that stopped part-way waits for the answer before it calls the server deaf. */
const ANSWER_WAIT_MS = 30_000;

/**
 * POSTs a body piece by piece until the server answers, and resolves with the answer and how much
 * was written before it. The writer stops at `pauseAt` bytes and waits: what is asserted is that
 * the server answers a body it has not had in full, so the writer must never finish it first.
 * (Racing the server instead made the bytes written hinge on how fast the kernel took them: on a
 * loaded machine a whole 9 MB body fit in the socket buffers before the answer.) A server that
 * waits for the rest never answers, and the promise rejects after `ANSWER_WAIT_MS`.
 */
function postUntilAnswered(
  url: string,
  headers: Record<string, string>,
  options: { pauseAt: number; total?: number; piece: (sent: number) => Uint8Array },
): Promise<EndlessBodyResult> {
  const { pauseAt, total, piece } = options;
  const framing =
    total === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(total) };
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    let deaf: NodeJS.Timeout | undefined;
    const req = request(url, { method: 'POST', headers: { ...headers, ...framing } });
    req.on('response', (res) => {
      answered = true;
      clearTimeout(deaf);
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
        if (sent >= pauseAt) {
          deaf = setTimeout(() => {
            if (answered) return;
            reject(new Error(`no answer after ${sent} bytes of a body not yet finished`));
            req.destroy();
          }, ANSWER_WAIT_MS);
          return;
        }
        const next = piece(sent);
        sent += next.byteLength;
        if (!req.write(next)) {
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
 * POSTs a chunked body that never ends (1 MiB chunks) and resolves with the answer. The writer
 * stops at `pauseAt` (25 MiB: past every bound of the API, the 20 MB of a document upload too) and waits; a server that reads the
 * whole body before answering never answers, and the promise rejects. `opening`, when given, is
 * written first (a multipart part's headers, say, so that the rest is that part's content).
 */
export function postEndlessBody(
  url: string,
  headers: Record<string, string>,
  pauseAt = 25 * 1024 * 1024,
  opening?: Uint8Array,
): Promise<EndlessBodyResult> {
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  return postUntilAnswered(url, headers, {
    pauseAt,
    piece: (sent) => (opening && sent === 0 ? opening : chunk),
  });
}

/**
 * POSTs a body of `totalBytes` with its length declared up front (as a browser's upload does),
 * written 256 KiB at a time up to `pauseAt` (1 MiB), and resolves with the answer and how much
 * was written before it.
 */
export function postDeclaredBody(
  url: string,
  headers: Record<string, string>,
  totalBytes: number,
  pauseAt = 1024 * 1024,
): Promise<EndlessBodyResult> {
  const chunk = Buffer.alloc(256 * 1024, 'a');
  return postUntilAnswered(url, headers, {
    pauseAt,
    total: totalBytes,
    piece: (sent) => chunk.subarray(0, Math.min(chunk.byteLength, totalBytes - sent)),
  });
}

/**
 * POSTs a declared 4 MiB body, writes half of it and goes away (the socket destroyed), as a
 * person who closes the tab mid-upload does. Resolves once the socket is closed and the server
 * has had a moment to notice.
 */
export function abandonedUpload(url: string, headers: Record<string, string>): Promise<void> {
  const total = 4 * 1024 * 1024;
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(total) } });
    req.on('error', () => {});
    req.write(Buffer.alloc(total / 2, 'a'), () => {
      setTimeout(() => {
        req.destroy();
        setTimeout(resolve, 200);
      }, 100);
    });
  });
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
 * POSTs `body` with its length declared, 64 KiB at a time, stopping at `pauseAt` bytes (the whole
 * body when not given) to wait for the answer, and resolves with the answer and how much was
 * written before it came.
 */
export function postBytes(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
  pauseAt = body.byteLength,
): Promise<EndlessBodyResult> {
  return postUntilAnswered(url, headers, {
    pauseAt,
    total: body.byteLength,
    piece: (sent) => body.subarray(sent, Math.min(sent + 64 * 1024, body.byteLength)),
  });
}

export interface WholeBodyAnswer {
  status: number;
  body: string;
  /** The error the writer met, if any (a broken pipe when the server cut the connection). */
  error?: string;
}

/**
 * POSTs `body` on a connection that asks to be closed after the answer (`Connection: close`),
 * writing all of it before it looks for the answer, as curl and simple clients do; resolves with
 * the answer, or with the error the writer met instead. `chunked`: no length declared up front.
 */
export function postWholeBodyClosing(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
  { chunked = false } = {},
): Promise<WholeBodyAnswer> {
  const piece = 256 * 1024;
  return new Promise((resolve) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        ...headers,
        connection: 'close',
        ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.byteLength) }),
      },
    });
    let status = 0;
    let text = '';
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (data: string) => {
        text += data;
      });
      res.on('end', () => resolve({ status, body: text }));
      res.on('error', (error) => resolve({ status, body: text, error: error.message }));
    });
    req.on('error', (error) => resolve({ status, body: text, error: error.message }));
    let sent = 0;
    const write = () => {
      while (sent < body.byteLength) {
        const next = body.subarray(sent, sent + piece);
        sent += next.byteLength;
        if (!req.write(next)) {
          req.once('drain', write);
          return;
        }
      }
      req.end();
    };
    write();
  });
}
