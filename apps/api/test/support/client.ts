import type { ChatMessage, Thread, ThreadDetail, ThreadPage, Turn, TurnQueue } from '@chat/contracts';

/**
 * The web origin test APIs trust (`testConfig` sets WEB_ORIGIN to it). Test clients send it as
 * `Origin` on every request, as a browser on the app would: the API refuses unsafe requests from
 * any other origin (`403 forbidden_origin`).
 */
export const TEST_WEB_ORIGIN = 'http://localhost:3000';

/** What a browser on the app sends with every API request. */
export const APP_HEADERS = { origin: TEST_WEB_ORIGIN, 'content-type': 'application/json' } as const;

export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface StreamChunk {
  type: string;
  [key: string]: unknown;
}

/** A signed-in guest talking to the API over real HTTP, keeping its session cookie. */
export class ApiClient {
  private constructor(
    readonly baseUrl: string,
    private cookie: string,
  ) {}

  static async signIn(baseUrl: string): Promise<ApiClient> {
    const response = await fetch(`${baseUrl}/api/auth/sign-in/anonymous`, {
      method: 'POST',
      headers: APP_HEADERS,
      body: '{}',
    });
    if (response.status !== 200)
      throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
    const cookie = response.headers
      .getSetCookie()
      .map((value) => value.split(';')[0])
      .join('; ');
    return new ApiClient(baseUrl, cookie);
  }

  /** A client with no session yet (sign up or sign in with `auth`). */
  static anonymousVisitor(baseUrl: string): ApiClient {
    return new ApiClient(baseUrl, '');
  }

  withCookie(cookie: string): ApiClient {
    return new ApiClient(this.baseUrl, cookie);
  }

  /**
   * POSTs to better-auth (`/api/auth/<path>`) with this client's cookie, and keeps the cookies
   * the answer sets (a new session replaces the old one; a cleared cookie goes).
   */
  async auth<T = unknown>(path: string, body: unknown = {}): Promise<JsonResponse<T>> {
    const response = await this.fetch('POST', `/api/auth/${path}`, body);
    const jar = new Map(
      this.cookie
        .split('; ')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair] as const),
    );
    for (const header of response.headers.getSetCookie()) {
      const pair = header.split(';')[0] ?? '';
      const name = pair.slice(0, pair.indexOf('='));
      if (/max-age=0\b/i.test(header) || pair.endsWith('=')) jar.delete(name);
      else jar.set(name, pair);
    }
    this.cookie = [...jar.values()].join('; ');
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : null) as T,
    };
  }

  /** The same user, through another API instance. */
  via(baseUrl: string): ApiClient {
    return new ApiClient(baseUrl, this.cookie);
  }

  /** The session cookie, for requests made by hand. */
  get cookieHeader(): string {
    return this.cookie;
  }

  /**
   * A request as the app sends it: the session cookie, `Origin` and `content-type:
   * application/json` (the API's request guard wants both). `init.headers` adds to or replaces them.
   */
  async fetch(method: string, path: string, body?: unknown, init: RequestInit = {}): Promise<Response> {
    const { headers, ...rest } = init;
    return await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { cookie: this.cookie, ...APP_HEADERS, ...(headers as Record<string, string> | undefined) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      ...rest,
    });
  }

  async json<T = unknown>(method: string, path: string, body?: unknown): Promise<JsonResponse<T>> {
    const response = await this.fetch(method, path, body);
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : null) as T,
    };
  }

  async createThread(title?: string): Promise<string> {
    const { status, body } = await this.json<{ id: string }>('POST', '/api/threads', title ? { title } : {});
    if (status !== 201) throw new Error(`create thread: ${status}`);
    return body.id;
  }

  /** One page of the thread list (`GET /api/threads?limit&cursor`). */
  async threadPage(options: { limit?: number; cursor?: string } = {}): Promise<ThreadPage> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.cursor !== undefined) query.set('cursor', options.cursor);
    const suffix = query.size > 0 ? `?${query}` : '';
    const { status, body } = await this.json<ThreadPage>('GET', `/api/threads${suffix}`);
    if (status !== 200) throw new Error(`thread list: ${status}`);
    return body;
  }

  /** Every thread, following `nextCursor` page by page. */
  async allThreads(limit = 200): Promise<Thread[]> {
    const threads: Thread[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.threadPage({ limit, cursor });
      threads.push(...page.threads);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return threads;
  }

  async detail(threadId: string): Promise<ThreadDetail> {
    const { status, body } = await this.json<ThreadDetail>('GET', `/api/threads/${threadId}`);
    if (status !== 200) throw new Error(`thread detail: ${status}`);
    return body;
  }

  async turnQueue(threadId: string): Promise<TurnQueue> {
    return (await this.detail(threadId)).turnQueue;
  }

  /** POST a send; the response is returned unread (SSE when claimed). */
  async send(
    threadId: string,
    text: string,
    clientRequestId: string = crypto.randomUUID(),
  ): Promise<Response> {
    return await this.fetch('POST', `/api/threads/${threadId}/turns`, { clientRequestId, text });
  }

  /** Sends and reads the whole reply stream. */
  async sendAndRead(threadId: string, text: string): Promise<{ turnId: string; chunks: StreamChunk[] }> {
    const response = await this.send(threadId, text);
    if (response.status !== 200) throw new Error(`send: ${response.status} ${await response.text()}`);
    return { turnId: response.headers.get('x-turn-id') ?? '', chunks: await readChunks(response) };
  }

  /** Edits a user message into a new version and reads its reply to the end; returns the detail. */
  async editAndRead(threadId: string, messageId: string, text: string): Promise<ThreadDetail> {
    const response = await this.fetch('POST', `/api/threads/${threadId}/messages/${messageId}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text,
    });
    if (response.status !== 200) throw new Error(`edit: ${response.status} ${await response.text()}`);
    await readChunks(response);
    return await this.detail(threadId);
  }

  /** Shows another version (branch) of the chat; returns the detail it answers with. */
  async switchBranch(threadId: string, branchId: string): Promise<ThreadDetail> {
    const { status, body } = await this.json<ThreadDetail>('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId,
    });
    if (status !== 200) throw new Error(`switch branch: ${status}`);
    return body;
  }

  async queued(threadId: string, text: string): Promise<Turn> {
    const response = await this.send(threadId, text);
    if (response.status !== 202)
      throw new Error(`expected 202, got ${response.status} ${await response.text()}`);
    return ((await response.json()) as { turn: Turn }).turn;
  }
}

/** Parses an AI SDK UI message stream (SSE) into its chunks. */
export async function readChunks(response: Response): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = [];
  for await (const chunk of iterateChunks(response)) chunks.push(chunk);
  return chunks;
}

export async function* iterateChunks(response: Response): AsyncGenerator<StreamChunk> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of frame.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data !== '[DONE]') yield JSON.parse(data) as StreamChunk;
      }
      end = buffer.indexOf('\n\n');
    }
  }
}

/** Reads a stream up to and including the first chunk that matches; the rest stays unread. */
export async function readChunksUntil(
  stream: AsyncGenerator<StreamChunk>,
  match: (chunk: StreamChunk) => boolean,
): Promise<StreamChunk[]> {
  const seen: StreamChunk[] = [];
  // Not `for await`: leaving that loop would close the stream.
  for (let next = await stream.next(); !next.done; next = await stream.next()) {
    seen.push(next.value);
    if (match(next.value)) return seen;
  }
  throw new Error('the stream ended first');
}

/** The rest of a stream, to its end. */
export async function readRest(stream: AsyncGenerator<StreamChunk>): Promise<StreamChunk[]> {
  const seen: StreamChunk[] = [];
  for await (const chunk of stream) seen.push(chunk);
  return seen;
}

/** Reads a stream until its text holds at least `words` words, then drops the connection. */
export async function readUntilWords(response: Response, words: number): Promise<string> {
  let text = '';
  for await (const chunk of iterateChunks(response)) {
    if (chunk.type === 'text-delta') text += String(chunk.delta);
    if (text.trim().split(/\s+/).length >= words) break;
  }
  return text;
}

export function textOfChunks(chunks: StreamChunk[]): string {
  return chunks
    .filter((chunk) => chunk.type === 'text-delta')
    .map((chunk) => String(chunk.delta))
    .join('');
}

export function textOfMessage(message: ChatMessage | undefined): string {
  return (message?.parts ?? [])
    .filter((part) => part.type === 'text')
    .map((part) => String(part.text))
    .join('');
}

export async function waitFor<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The chat's detail once nothing runs in it (a reply and whatever it started have settled). */
export async function untilIdle(
  client: ApiClient,
  threadId: string,
  timeoutMs = 60_000,
): Promise<ThreadDetail> {
  return await waitFor(
    () => client.detail(threadId),
    (read) => read.turnQueue.activeTurn === null,
    timeoutMs,
  );
}
