import type { Session } from '../http';
import type { ServerProcess } from '../processes';
import type { Mode } from '../rows';

export interface BenchContext {
  mode: Mode;
  api: ServerProcess;
  baseline: ServerProcess;
  session: Session;
  /** Progress lines go to stderr so stdout stays the table (or JSON). */
  log(message: string): void;
}

/** A send to the bare baseline server: same body shape, no auth, no thread. */
export async function sendBaseline(baseUrl: string, text: string, signal?: AbortSignal): Promise<Response> {
  return await fetch(`${baseUrl}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
    signal,
  });
}

/** Runs `work` over `items` with at most `limit` in flight. */
export async function inParallel<T>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(workers);
}
