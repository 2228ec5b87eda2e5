// Plain JavaScript so that scripts/start.mjs, which runs before anything is built, can import it
// too; the API and the web app take it through the package's index.

/**
 * The wait before attempt `failures + 1` after `failures` failed attempts in a row: `firstMs`
 * after the first failure, doubling with each further one, never more than `maxMs`. The one
 * home of the backoff rule: every retry loop of the server, the web app and the start script
 * waits by it.
 */
export function backoffDelay(failures, firstMs, maxMs) {
  if (failures < 1) return 0;
  return Math.min(maxMs, firstMs * 2 ** (failures - 1));
}
