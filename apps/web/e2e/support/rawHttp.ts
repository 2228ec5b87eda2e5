import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body as JSON (the test fails when it is not). */
  json<T = { error?: { code: string; message: string } }>(): T;
}

/**
 * One HTTP request with the path sent byte for byte (fetch and Playwright's request context would
 * resolve `..` and `%2e%2e` before sending, hiding exactly what these tests are about).
 */
export function rawRequest(
  origin: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers: options.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: <T>() => JSON.parse(text) as T,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A guest signed in through the web app's proxy, with JSON helpers that send its cookie. */
export class ProxyGuest {
  private constructor(
    readonly origin: string,
    private readonly cookie: string,
  ) {}

  static async signIn(origin: string): Promise<ProxyGuest> {
    const response = await rawRequest(origin, 'POST', '/api/auth/sign-in/anonymous', {
      headers: { 'content-type': 'application/json', origin },
      body: '{}',
    });
    if (response.status !== 200) throw new Error(`sign-in: ${response.status} ${response.text}`);
    const setCookie = response.headers['set-cookie'] ?? [];
    return new ProxyGuest(origin, setCookie.map((value) => value.split(';')[0]).join('; '));
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { cookie: this.cookie, origin: this.origin, ...extra };
  }

  request(method: string, path: string, body?: unknown): Promise<RawResponse> {
    const json: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    return rawRequest(this.origin, method, path, {
      headers: this.headers(json),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async createThread(): Promise<string> {
    const response = await this.request('POST', '/api/threads', {});
    if (response.status !== 201) throw new Error(`create thread: ${response.status} ${response.text}`);
    return response.json<{ id: string }>().id;
  }
}
