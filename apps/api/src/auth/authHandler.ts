import {
  type ErrorBody,
  type ErrorCode,
  errorMessage,
  errorTable,
  signInBody,
  signUpBody,
} from '@chat/contracts';
import type { H3Event } from 'h3';
import type { z } from 'zod';
import type { DatabaseCircuit } from '../platform/databaseCircuit';
import { ApiError, databaseUnavailable } from '../platform/errors';
import { readJson } from '../platform/http';
import type { RateLimiter } from '../platform/rateLimit';
import { requestWithBody } from '../platform/requestBody';
import type { Auth } from './auth';

/** Bodies checked by our contract before better-auth sees them, so a refusal names the field. */
const checkedBodies: Record<string, z.ZodType<Record<string, unknown>>> = {
  '/api/auth/sign-up/email': signUpBody,
  '/api/auth/sign-in/email': signInBody,
};

/**
 * better-auth's `/api/auth/**` in the contract's terms: sign-up and sign-in bodies are checked
 * first (`400 bad_request` with `error.field`) and counted per email address against the sign-in
 * limit (the app counts them per IP before this), guest sign-in is refused when guests are off
 * (`403 guests_disabled`), and better-auth's own refusals become `{ error: { code, message } }`.
 * The request guard has already read the body (`platform/requestBody.ts`).
 */
export function createAuthHandler(
  auth: Auth,
  options: { allowGuests: boolean; limits: RateLimiter; database: DatabaseCircuit },
) {
  return async (event: H3Event): Promise<Response> => {
    const path = event.url.pathname.replace(/\/+$/, '');
    if (path === '/api/auth/sign-in/anonymous' && !options.allowGuests) throw new ApiError('guests_disabled');
    const schema = checkedBodies[path];
    let forwarded = requestWithBody(event);
    if (schema && event.req.method === 'POST') {
      const body = await readJson(event, schema);
      options.limits.hit('signIns', `email:${String(body.email).toLowerCase()}`);
      const headers = new Headers(event.req.headers);
      headers.delete('content-length');
      forwarded = new Request(event.req.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: event.req.signal,
      });
    }
    const response = await auth.handler(forwarded);
    if (response.status >= 500) {
      // better-auth caught a failure of its own (it has been logged, redacted, through auth.ts's
      // logger, which opened the circuit if it was the database): never an empty 500.
      throw options.database.isOpen
        ? databaseUnavailable()
        : new Error(`better-auth answered ${response.status}`);
    }
    return response.status >= 400 ? await asContractRefusal(response) : response;
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

async function asContractRefusal(response: Response): Promise<Response> {
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
  return new Response(JSON.stringify(body), { status: errorTable[code].status, headers });
}
