import { request } from 'undici';

/**
 * A signed-in guest talking to the API over plain HTTP, and a reader that timestamps the text
 * deltas of an AI SDK UI message stream (SSE) without parsing every chunk.
 */
export class Session {
  private constructor(
    readonly baseUrl: string,
    private readonly cookie: string,
    /** Sent on every request, as a browser would: the API refuses writes from other origins. */
    private readonly origin: string,
  ) {}

  /** A guest account, as the web app makes on a first visit (better-auth's anonymous sign-in). */
  static async guest(baseUrl: string, origin: string): Promise<Session> {
    const response = await fetch(`${baseUrl}/api/auth/sign-in/anonymous`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: '{}',
    });
    if (response.status !== 200) throw new Error(`sign-in: ${response.status} ${await response.text()}`);
    const cookie = response.headers
      .getSetCookie()
      .map((value) => value.split(';')[0])
      .join('; ');
    return new Session(baseUrl, cookie, origin);
  }

  /** The same person through another API instance (same cookie and origin). */
  via(baseUrl: string): Session {
    return new Session(baseUrl, this.cookie, this.origin);
  }

  /** Another guest, on the same API and origin (a second person). */
  async anotherGuest(): Promise<Session> {
    return await Session.guest(this.baseUrl, this.origin);
  }

  /** The headers a request of this person carries (its session cookie and its origin). */
  requestHeaders(): Record<string, string> {
    return { cookie: this.cookie, origin: this.origin };
  }

  /** POSTs a multipart body built by hand (`boundary` names its separator); the answer is read. */
  async upload(threadId: string, body: Uint8Array<ArrayBuffer>, boundary: string): Promise<number> {
    const response = await fetch(`${this.baseUrl}/api/threads/${threadId}/attachments`, {
      method: 'POST',
      headers: {
        cookie: this.cookie,
        origin: this.origin,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body,
    });
    await response.arrayBuffer();
    return response.status;
  }

  async fetch(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    return await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        cookie: this.cookie,
        origin: this.origin,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  }

  async json<T>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
    const response = await this.fetch(method, path, body);
    const text = await response.text();
    if (response.status !== expected)
      throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }

  async createThread(): Promise<string> {
    return (await this.json<{ id: string }>('POST', '/api/threads', {}, 201)).id;
  }

  /** POST a send; the response is returned unread (SSE when it runs at once, 202 when queued). */
  async send(
    threadId: string,
    text: string,
    clientRequestId: string = crypto.randomUUID(),
  ): Promise<Response> {
    return await this.fetch('POST', `/api/threads/${threadId}/turns`, { clientRequestId, text });
  }

  /** `sendUntilStarted` through `lightRequest` (the streams scenario's many open answers). */
  async lightSendUntilStarted(
    threadId: string,
    text: string,
  ): Promise<{ response: StreamAnswer; retries: number }> {
    return await untilStarted((clientRequestId) =>
      lightRequest(`${this.baseUrl}/api/threads/${threadId}/turns`, {
        method: 'POST',
        headers: { ...this.requestHeaders(), 'content-type': 'application/json' },
        body: JSON.stringify({ clientRequestId, text }),
      }),
    );
  }

  /**
   * A send as the web app makes it: shed with `503 overloaded`, it goes again with the same
   * clientRequestId after the answer's Retry-After (`untilStarted`). Returns the first answer that
   * is not a 503, unread.
   */
  async sendUntilStarted(threadId: string, text: string): Promise<{ response: Response; retries: number }> {
    return await untilStarted((clientRequestId) => this.send(threadId, text, clientRequestId));
  }
}

/**
 * Sends (`send`, given one clientRequestId for all its tries) until the answer is not a `503`:
 * after each, it waits the answer's Retry-After stretched at random by up to half, so the retries
 * do not come back as one burst.
 */
async function untilStarted<Answer extends Response | StreamAnswer>(
  send: (clientRequestId: string) => Promise<Answer>,
): Promise<{ response: Answer; retries: number }> {
  const clientRequestId = crypto.randomUUID();
  for (let retries = 0; ; retries++) {
    const response = await send(clientRequestId);
    if (response.status !== 503) return { response, retries };
    await response.text();
    const retryAfter =
      'header' in response ? response.header('retry-after') : response.headers.get('retry-after');
    const seconds = Number(retryAfter) || 1;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1_000 * (1 + Math.random() / 2)));
  }
}

export interface StreamTiming {
  /** Milliseconds from `startedAt` to the first text delta (NaN when there was none). */
  firstDeltaMs: number;
  /** Milliseconds from `startedAt` to the end of the body. */
  endMs: number;
  /** Arrival times (performance.now()) of every text delta. */
  deltaTimes: number[];
}

const TEXT_DELTA = '"type":"text-delta"';

/**
 * Reads an SSE body to its end, timestamping each text delta as it arrives. `onFirstDelta` runs
 * once, when the first delta lands (the caller may act while the rest keeps streaming).
 */
/** What `readStream` reads: a `fetch` Response, or `lightRequest`'s answer. */
export interface StreamAnswer {
  status: number;
  body: AsyncIterable<Uint8Array> | null;
  text(): Promise<string>;
  header(name: string): string | null;
}

/**
 * A request through undici's own `request` instead of `fetch`, for scenarios that hold hundreds of
 * answers open at once from this one process on the cores the servers run on: `fetch` (WHATWG
 * streams) costs this client about twice the CPU per request and per chunk read, CPU the servers'
 * answers then wait behind.
 */
export async function lightRequest(
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
): Promise<StreamAnswer> {
  const response = await request(url, init);
  return {
    status: response.statusCode,
    body: response.body,
    text: () => response.body.text(),
    header: (name) => {
      const value = response.headers[name.toLowerCase()];
      return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
    },
  };
}

export async function readStream(
  response: Response | StreamAnswer,
  startedAt: number,
  onFirstDelta?: () => void,
): Promise<StreamTiming> {
  if (response.status !== 200)
    throw new Error(`expected a stream, got ${response.status} ${await response.text()}`);
  const deltaTimes: number[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  if (response.body) {
    for await (const bytes of response.body) {
      const now = performance.now();
      buffer += decoder.decode(bytes, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        if (buffer.slice(0, end).includes(TEXT_DELTA)) {
          deltaTimes.push(now);
          if (deltaTimes.length === 1) onFirstDelta?.();
        }
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
      }
    }
  }
  const first = deltaTimes[0];
  return {
    firstDeltaMs: first === undefined ? Number.NaN : first - startedAt,
    endMs: performance.now() - startedAt,
    deltaTimes,
  };
}

/** Resolves at the first text delta of a stream that keeps being read (and timed) in the background. */
export function firstDeltaThenDrain(
  response: Response,
  startedAt: number,
): { firstDelta: Promise<void>; done: Promise<StreamTiming> } {
  let resolveFirst: () => void = () => {};
  const firstDelta = new Promise<void>((resolve) => {
    resolveFirst = resolve;
  });
  const done = readStream(response, startedAt, () => resolveFirst());
  done.then(
    () => resolveFirst(),
    () => resolveFirst(),
  );
  return { firstDelta, done };
}
