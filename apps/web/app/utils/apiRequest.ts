import type { ErrorCode, StopAndSendLeftWaiting } from '@chat/contracts';

/** A refusal from the API (`{ error: { code, message } }`), or a failure to reach it. */
export class ApiRequestError extends Error {
  constructor(
    message: string,
    /** HTTP status; 0 when the request never got an answer (network, abort). */
    readonly status: number,
    /** The contract's error code, when the API sent one. */
    readonly code: ErrorCode | null = null,
    /** The request field a `400` is about (`error.field`), e.g. "email". */
    readonly field: string | null = null,
    /** Seconds the server asked to wait before trying again (`Retry-After`), when it said. */
    readonly retryAfterS: number | null = null,
    /** A refused Stop & send that had already paused the queue (and stopped the reply): F4. */
    readonly leftWaiting: StopAndSendLeftWaiting | null = null,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }

  /** Worth sending the same request again (the API never refused it). */
  get retryable(): boolean {
    return this.status === 0 || this.status >= 500;
  }

  static async fromResponse(response: Response): Promise<ApiRequestError> {
    const fallback = `The server answered ${response.status} ${response.statusText}`.trim();
    try {
      const body: unknown = await response.json();
      const error = (
        body as {
          error?: {
            code?: unknown;
            message?: unknown;
            field?: unknown;
            queuePaused?: unknown;
            replyStopped?: unknown;
          };
        } | null
      )?.error;
      if (error && typeof error.message === 'string') {
        const code = typeof error.code === 'string' ? (error.code as ErrorCode) : null;
        const field = typeof error.field === 'string' ? error.field : null;
        const retryAfter = Number(response.headers.get('retry-after'));
        const retryAfterS = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null;
        const leftWaiting: StopAndSendLeftWaiting | null =
          error.queuePaused === true
            ? { queuePaused: true, ...(error.replyStopped === true ? { replyStopped: true as const } : {}) }
            : null;
        return new ApiRequestError(error.message, response.status, code, field, retryAfterS, leftWaiting);
      }
    } catch {
      // Not JSON (a proxy error page, say): fall back to the status line.
    }
    return new ApiRequestError(fallback, response.status);
  }

  static fromUnknown(error: unknown): ApiRequestError {
    if (error instanceof ApiRequestError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new ApiRequestError(`Could not reach the server: ${message}`, 0);
  }
}

/** `fetch` options, plus `json`: a body sent as JSON. */
export type ApiRequestInit = RequestInit & { json?: unknown };

/**
 * `fetch` against our own /api (same origin, cookies included) that throws ApiRequestError
 * on any non-2xx answer and hands back the raw Response otherwise, so callers can tell
 * 200 SSE from 202 JSON.
 */
export async function apiFetch(path: string, init: ApiRequestInit = {}): Promise<Response> {
  const { json, headers, ...rest } = init;
  let response: Response;
  try {
    response = await fetch(path, {
      credentials: 'same-origin',
      ...rest,
      headers: json === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: json === undefined ? rest.body : JSON.stringify(json),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw ApiRequestError.fromUnknown(error);
  }
  if (!response.ok) throw await ApiRequestError.fromResponse(response);
  return response;
}

/** apiFetch for JSON answers. */
export async function apiJson<T>(path: string, init: ApiRequestInit = {}): Promise<T> {
  const response = await apiFetch(path, init);
  return (await response.json()) as T;
}
