import type { H3Event } from 'h3';
import type { Logger } from './logger';
import { stepTimesOf } from './serverTiming';

/**
 * One line per request, as operators of other self-hosted apps expect (`request`, at `info`):
 * method, route pattern, status and milliseconds from arrival to the response's headers (a
 * streamed reply goes on after them). The route is the pattern (`/api/threads/:id`), never the
 * address itself, so no id, share token or query string (`?q=` of a search is what someone
 * typed) reaches the log; no header, cookie or body is read here.
 */
export function logRequest(logger: Logger, event: H3Event, response: Response): void {
  logAnswer(logger, event.req.method, routeOf(event), response.status, stepTimesOf(event).elapsedMs());
}

/** The same line for an answer given before h3 saw the request (`sendDoor.ts`). */
export function logAnswer(logger: Logger, method: string, route: string, status: number, ms: number): void {
  logger.info({ method, route, status, ms: Math.round(ms) }, 'request');
}

/** The matched route's pattern; `unmatched` when the request was refused before routing. */
function routeOf(event: H3Event): string {
  return event.context.matchedRoute?.route ?? 'unmatched';
}
