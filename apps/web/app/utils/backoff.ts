// Its own entry, not the package's index: on every page's first script (the session's reconnects)
// the index would build the contracts' zod schemas, and zod tries `new Function` while building
// some, which the page's CSP refuses (security.spec.ts reports the violation).
import { backoffDelay } from '@chat/contracts/backoff';

/**
 * Growing waits (1 s, 2 s, 4 s, ... up to `maxMs`) between attempts to reach the API again
 * after it was unreachable: the page says it is reconnecting meanwhile and recovers by itself.
 */
export function createBackoff(options: { minMs?: number; maxMs?: number } = {}) {
  const minMs = options.minMs ?? 1000;
  const maxMs = options.maxMs ?? 8000;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;

  /** Runs `run` once after the next wait (nothing if one is already waiting). */
  function after(run: () => void): void {
    if (timer) return;
    failures++;
    const wait = backoffDelay(failures, minMs, maxMs);
    timer = setTimeout(() => {
      timer = null;
      run();
    }, wait);
  }

  /** Runs `task` after the next wait, and again after each wait while it answers false. */
  function retry(task: () => Promise<boolean>): void {
    after(() => {
      void task()
        .catch(() => false)
        .then((succeeded) => (succeeded ? reset() : retry(task)));
    });
  }

  /** It worked: nothing more is waiting, and the next wait is the shortest again. */
  function reset(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    failures = 0;
  }

  return { after, retry, reset };
}
