import { ApiRequestError } from './apiRequest';

/** Attempts of one request the server keeps shedding before the page gives up and says so. */
export const MAX_SHED_ATTEMPTS = 20;

/** Shed without a `Retry-After`: wait this long. */
const DEFAULT_WAIT_S = 1;

/** The server could not take the request now (`503 overloaded`): it recorded nothing. */
export function isShed(error: unknown): error is ApiRequestError {
  return error instanceof ApiRequestError && error.code === 'overloaded';
}

/**
 * How long to wait before sending a shed request again: what the server asked (`Retry-After`),
 * stretched by up to half again at random, so the tabs it shed together do not all come back in
 * the same instant.
 */
export function shedWaitMs(error: ApiRequestError, random: () => number = Math.random): number {
  const seconds = error.retryAfterS ?? DEFAULT_WAIT_S;
  return Math.round(seconds * 1000 * (1 + random() / 2));
}

export interface ShedOptions {
  /** Called once, at the first refusal: the page says the server is busy while it tries again. */
  onShed: () => void;
  /** Ends the waiting (Stop, the page closing): the last refusal is thrown. */
  signal?: AbortSignal;
  maxAttempts?: number;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Sends a request that may start a turn until the server takes it (L1). A `503 overloaded` means
 * it was not accepted: the same request (same `clientRequestId`) goes out again after the wait the
 * server asked for, by itself, up to `maxAttempts`. Any other answer or failure is the caller's.
 */
export async function sendUntilTaken(send: () => Promise<Response>, options: ShedOptions): Promise<Response> {
  const { onShed, signal, maxAttempts = MAX_SHED_ATTEMPTS, random, sleep: wait = sleep } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!isShed(error) || attempt >= maxAttempts || signal?.aborted) throw error;
      if (attempt === 1) onShed();
      await wait(shedWaitMs(error, random), signal);
      if (signal?.aborted) throw error;
    }
  }
}
