import type { IncomingMessage, ServerResponse } from 'node:http';
import type { H3Event } from 'h3';
import { logAnswer } from './accessLog';
import type { DatabaseCircuit } from './databaseCircuit';
import { errorBody } from './errors';
import type { Logger } from './logger';
import { API_SECURITY_HEADERS } from './securityHeaders';
import { overloadedSends, type StartSlots } from './startSlots';

/** A route that starts a turn, as registered (`POST /api/threads/:id/turns`). */
export interface TurnStartRoute {
  method: string;
  path: string;
}

/** The Node request listener the door stands in front of (srvx's, which hands the request to h3). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Sends the door let through (their arrival is counted already): Node's request, as h3 keeps it on
 * the event (`event.runtime.node.req`).
 */
const passed = new WeakSet<IncomingMessage>();

/** Whether this request passed the door (its arrival was counted there). */
export function passedTheDoor(event: H3Event): boolean {
  const req = event.runtime?.node?.req;
  return req !== undefined && passed.has(req as IncomingMessage);
}

/**
 * The shed of a burst of sends, decided at the door: in Node's own request listener, by method and
 * path alone, before srvx builds a web Request, h3 an event, the request guard reads the body and
 * the route looks up the session. A send the start slots refuse at once (`StartSlots.refusesAtOnce`:
 * the loop is behind, or every slot is taken and the line is full) is answered there with the same
 * `503 overloaded` as the route wrapper gives (the contract's body, `Retry-After`, the security
 * headers), written in one piece with its length. A burst of 1,000 sends is mostly these answers,
 * and every one costs the loop that Stop, reads and the admitted turns share: here it costs about a
 * third of what it does through h3 (measured: 0.07 against 0.19 ms of CPU each).
 *
 * Anything else goes on to `next` unchanged, and a send that may start is then decided again by
 * the route wrapper (`acquire`, which waits in the line). Not decided here, so answered as before:
 * a path that is not plainly one of the routes (an id of other characters, a query, dot segments;
 * the request guard judges those), and every send while the database circuit is open (the gate's
 * `503 unavailable` says more). A send refused here is refused before its origin, media type, body
 * and session are checked: `503` says only "not now", and nothing of it is read or recorded.
 */
export function sendDoor(options: {
  routes: readonly TurnStartRoute[];
  starts: StartSlots;
  database: DatabaseCircuit;
  logger: Logger;
  next: NodeListener;
}): NodeListener {
  const { starts, database, logger, next } = options;
  const matchers = options.routes.map((route) => ({
    method: route.method.toUpperCase(),
    route: route.path,
    path: pathPattern(route.path),
  }));
  const error = overloadedSends();
  const body = Buffer.from(JSON.stringify(errorBody(error)));
  const headers = {
    ...API_SECURITY_HEADERS,
    ...error.headers,
    'content-type': 'application/json',
    'content-length': String(body.byteLength),
  };
  return (req, res) => {
    const at = performance.now();
    const url = req.url ?? '';
    const match = matchers.find((matcher) => matcher.method === req.method && matcher.path.test(url));
    if (!match || database.isOpen) return next(req, res);
    if (!starts.refusesAtOnce()) {
      passed.add(req);
      return next(req, res);
    }
    res.writeHead(error.status, headers);
    res.end(body);
    logAnswer(logger, match.method, match.route, error.status, performance.now() - at);
  };
}

/**
 * The request targets a route pattern stands for, strictly: each `:param` one id of letters,
 * digits, `-` and `_`, nothing after the path. Whatever else the router would take goes on to it.
 */
function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[A-Za-z0-9_-]{1,128}' : escapeRegExp(segment)))
    .join('/');
  return new RegExp(`^${source}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
