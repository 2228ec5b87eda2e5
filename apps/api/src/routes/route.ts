import type { H3, H3Event } from 'h3';
import type { SignedIn } from '../auth/signedIn';
import { ApiError, refusalResponse } from '../platform/errors';
import type { RateLimitRule } from '../platform/rateLimit';
import { applySecurityHeaders } from '../platform/securityHeaders';
import { passedTheDoor, type TurnStartRoute } from '../platform/sendDoor';
import { stepTimesOf } from '../platform/serverTiming';
import type { ApiServices } from './services';

export type AuthedHandler = (
  event: H3Event,
  userId: string,
  signedIn: SignedIn,
) => Promise<unknown> | unknown;
type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteOptions {
  /** Counts each request against this per-account rate limit (`429 rate_limited` past it). */
  limit?: RateLimitRule;
  /**
   * The request may start a turn: it takes one of the instance's start slots first, before its
   * session is looked up (`503 overloaded` at once when the box is starting all it can).
   */
  startsTurn?: boolean;
}

/** The routes registered with `startsTurn`, per app: the ones the send door knows (`sendDoor.ts`). */
const turnStarts = new WeakMap<H3, TurnStartRoute[]>();

/** The routes of `app` that start a turn (registered through `authedRoutes` with `startsTurn`). */
export function turnStartRoutes(app: H3): readonly TurnStartRoute[] {
  return turnStarts.get(app) ?? [];
}

/**
 * The one route wrapper: `route(method, path, handler, options?)` registers a route that needs a
 * signed-in user (`401 unauthorized` otherwise; a guest counts as none when guests are switched
 * off), counted against `options.limit` per account.
 * Refusals thrown by a handler go to the app's error handler. The app-level request guard has
 * already checked the origin, the media type and the body (`platform/requestGuard.ts`).
 */
export function authedRoutes(app: H3, services: ApiServices) {
  return (method: Method, path: string, handler: AuthedHandler, options: RouteOptions = {}) => {
    if (options.startsTurn) turnStarts.set(app, [...turnStartRoutes(app), { method, path }]);
    app[method](path, async (event) => {
      const times = stepTimesOf(event);
      let release: (() => void) | undefined;
      if (options.startsTurn) {
        try {
          // A send the door let through was counted there (`sendDoor.ts`).
          release = await times.measure('wait', () =>
            services.http.starts.acquire({ counted: passedTheDoor(event) }),
          );
        } catch (error) {
          // Shed (`503 overloaded`): answered here, the cheapest way, as it is the one answer a
          // burst gets most of (the error path would wrap it, and take and format a stack).
          if (error instanceof ApiError) {
            const response = refusalResponse(error);
            applySecurityHeaders(response.headers);
            return response;
          }
          throw error;
        }
      }
      try {
        const signedIn = await times.measure('auth', () => services.accounts.signedIn(event.req.headers));
        if (!signedIn) throw new ApiError('unauthorized');
        if (options.limit) await services.http.limits.hit(options.limit, `user:${signedIn.userId}`);
        return await handler(event, signedIn.userId, signedIn);
      } finally {
        release?.();
      }
    });
  };
}

export type PublicHandler = (event: H3Event) => Promise<unknown> | unknown;

/**
 * The same wrapper for the few routes anyone may call without a session (a shared snapshot's
 * public read). Everything else goes through `authedRoutes`.
 */
export function publicRoutes(app: H3) {
  return (method: Method, path: string, handler: PublicHandler) => {
    app[method](path, async (event) => await handler(event));
  };
}
