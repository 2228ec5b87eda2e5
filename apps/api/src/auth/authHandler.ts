import {
  changePasswordBody,
  type ErrorBody,
  type ErrorCode,
  errorMessage,
  errorTable,
  signInBody,
  signUpBody,
  updateUserBody,
} from '@chat/contracts';
import type { H3Event } from 'h3';
import type { z } from 'zod';
import type { DatabaseCircuit } from '../platform/databaseCircuit';
import { ApiError, databaseUnavailable, noSuchRoute } from '../platform/errors';
import { readJson } from '../platform/http';
import { clientAddress, type RateLimiter, type RateLimitRule } from '../platform/rateLimit';
import { requestWithBody } from '../platform/requestBody';
import { type Auth, signedInOf } from './auth';
import type { SessionCache } from './sessionCache';
import { SignInFailures } from './signInFailures';

/**
 * The better-auth routes the app serves (under `/api/auth/`), and what each is counted against per
 * address. Closed by default: any other route better-auth has (deleting a user behind the app's
 * back, listing linked accounts, ...) is `404 not_found`.
 */
const ROUTES: Record<string, { method: 'GET' | 'POST'; perAddress?: RateLimitRule }> = {
  'get-session': { method: 'GET' },
  'sign-in/anonymous': { method: 'POST', perAddress: 'guests' },
  'sign-in/email': { method: 'POST', perAddress: 'signIns' },
  'sign-up/email': { method: 'POST', perAddress: 'signIns' },
  'sign-out': { method: 'POST' },
  'change-password': { method: 'POST', perAddress: 'signIns' },
  'update-user': { method: 'POST' },
};

/** Bodies checked by our contract before better-auth sees them, so a refusal names the field. */
const checkedBodies: Record<string, z.ZodType<Record<string, unknown>>> = {
  'sign-up/email': signUpBody,
  'sign-in/email': signInBody,
  'update-user': updateUserBody,
  'change-password': changePasswordBody,
};

export interface AuthHandlerOptions {
  allowGuests: boolean;
  /** `AUTH_ALLOW_SIGNUP`: false refuses `sign-up/email` (`403 sign_up_disabled`); sign-in stays. */
  allowSignUp: boolean;
  limits: RateLimiter;
  /** Peers whose X-Forwarded-For is believed, for per-address limits. */
  trustedProxies: ReadonlySet<string>;
  database: DatabaseCircuit;
  /** Sessions looked up a moment ago: a sign-out or a password change ends them everywhere. */
  sessions: SessionCache;
}

/**
 * Routes that act as the session's person. With guests switched off a guest's session is none
 * (`signedInOf`): these answer it as they answer no session at all.
 */
const AS_THE_SESSION = new Set(['get-session', 'update-user', 'change-password']);

/** Routes after which some of the caller's sessions have ended (a password change may end the others). */
const ENDS_SESSIONS = new Set(['sign-out', 'change-password']);

/**
 * better-auth's `/api/auth/**` in the contract's terms: only the routes above; bodies checked first
 * (`400 bad_request` with `error.field`); attempts counted per address, failed sign-ins and password
 * changes as `SignInFailures` says (`429 rate_limited`); guest sign-in refused when guests are off
 * (`403 guests_disabled`), and a guest's session then answered as none; sign-up when it is closed
 * (`403 sign_up_disabled`); better-auth's own refusals become `{ error: { code, message } }`, and a
 * failure of its own is never an empty 500. The request guard has already read the body
 * (`platform/requestBody.ts`).
 */
export function createAuthHandler(auth: Auth, options: AuthHandlerOptions) {
  const failures = new SignInFailures(options.limits);
  return async (event: H3Event): Promise<Response> => {
    const route = event.url.pathname.replace(/\/+$/, '').replace(/^\/api\/auth\//, '');
    const served = ROUTES[route];
    if (!served || served.method !== event.req.method) throw noSuchRoute();
    if (route === 'sign-in/anonymous' && !options.allowGuests) throw new ApiError('guests_disabled');
    if (!options.allowGuests && AS_THE_SESSION.has(route)) {
      const who = await signedInOf(auth, event.req.headers, { allowGuests: true, cache: options.sessions });
      // better-auth's own answers to no session: `null` for get-session, 401 for the others.
      if (who?.isGuest) {
        if (route === 'get-session') return Response.json(null, { headers: { 'cache-control': 'no-store' } });
        throw new ApiError('unauthorized');
      }
    }
    if (route === 'sign-up/email' && !options.allowSignUp) throw new ApiError('sign_up_disabled');
    const address = clientAddress(event, options.trustedProxies);
    if (served.perAddress) await options.limits.hit(served.perAddress, `ip:${address}`);

    let forwarded = requestWithBody(event);
    let body: Record<string, unknown> | undefined;
    const schema = checkedBodies[route];
    if (schema) {
      body = await readJson(event, schema);
      const headers = new Headers(event.req.headers);
      headers.delete('content-length');
      forwarded = new Request(event.req.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: event.req.signal,
      });
    }
    const email = route === 'sign-in/email' ? String(body?.email) : undefined;
    if (email) await failures.assertMayTry(email, address);
    const caller = ENDS_SESSIONS.has(route)
      ? await signedInOf(auth, event.req.headers, { allowGuests: true, cache: options.sessions })
      : null;
    const changingPassword = route === 'change-password' ? caller : null;
    if (changingPassword) await failures.assertMayChangePassword(changingPassword.userId);

    const response = await auth.handler(forwarded);
    if (caller && response.status < 400) await options.sessions.ended(caller.userId);
    if (response.status >= 500) {
      // better-auth caught a failure of its own (it has been logged, redacted, through auth.ts's
      // logger, which opened the circuit if it was the database): never an empty 500.
      throw options.database.isOpen
        ? databaseUnavailable()
        : new Error(`better-auth answered ${response.status}`);
    }
    if (email) {
      if (response.status === 401) await failures.recordFailure(email, address);
      else if (response.ok) await failures.recordSuccess(email, address);
    }
    if (response.status < 400) return response;
    const refusal = await asContractRefusal(response);
    if (changingPassword && refusal.field === 'password')
      await failures.recordPasswordChangeFailure(changingPassword.userId);
    return refusal.response;
  };
}

/** better-auth codes that mean something the person can act on. */
const knownCodes: Record<string, { code: ErrorCode; field?: string }> = {
  INVALID_EMAIL_OR_PASSWORD: { code: 'invalid_credentials' },
  USER_ALREADY_EXISTS: { code: 'email_taken', field: 'email' },
  USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL: { code: 'email_taken', field: 'email' },
  INVALID_EMAIL: { code: 'bad_request', field: 'email' },
  INVALID_PASSWORD: { code: 'bad_request', field: 'password' },
  PASSWORD_TOO_SHORT: { code: 'bad_request', field: 'password' },
  PASSWORD_TOO_LONG: { code: 'bad_request', field: 'password' },
  INVALID_ORIGIN: { code: 'forbidden_origin' },
  MISSING_OR_NULL_ORIGIN: { code: 'forbidden_origin' },
};

/** Any other status keeps its meaning under the nearest contract code. */
function codeForStatus(status: number): ErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden_origin';
  if (status === 404) return 'not_found';
  if (status === 405) return 'method_not_allowed';
  if (status === 413) return 'too_large';
  if (status === 415) return 'unsupported_media_type';
  if (status === 429) return 'rate_limited';
  return 'bad_request';
}

async function asContractRefusal(response: Response): Promise<{ response: Response; field?: string }> {
  let upstream: { code?: unknown; message?: unknown } = {};
  try {
    upstream = (await response.clone().json()) as typeof upstream;
  } catch {
    // Not JSON: the status alone decides.
  }
  const known = typeof upstream.code === 'string' ? knownCodes[upstream.code] : undefined;
  const code = known?.code ?? codeForStatus(response.status);
  // The contract's wording for a code of its own; better-auth's (never personal data) for the rest.
  const ownWording = code !== 'bad_request' || typeof upstream.message !== 'string';
  const message = ownWording ? errorMessage(code) : String(upstream.message);
  const body: ErrorBody = { error: { code, message, ...(known?.field ? { field: known.field } : {}) } };
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.set('content-type', 'application/json');
  return {
    response: new Response(JSON.stringify(body), { status: errorTable[code].status, headers }),
    field: known?.field,
  };
}
