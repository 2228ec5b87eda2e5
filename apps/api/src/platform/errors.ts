import {
  type ErrorBody,
  type ErrorCode,
  errorMessage,
  errorTable,
  type NotEligibleReason,
  type NotFoundSubject,
  notEligibleMessages,
  notFoundMessages,
  refusalMessages,
  type ThreadBusyReason,
  threadBusyMessages,
} from '@chat/contracts';
import { isDatabaseUnavailable } from './databaseErrors';
import type { Logger } from './logger';

/**
 * A refusal the client caused; carries a stable code from the contract. The message defaults to
 * the code's own (contracts `errorTable`); a more precise one comes from the contract's wording
 * too (`refusalMessages` and the per-reason tables), never from a literal at the throw site.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string = errorMessage(code),
    readonly details?: Record<string, unknown>,
    /** Response headers that belong to the refusal (`Retry-After`, `Connection: close`). */
    readonly headers?: Record<string, string>,
  ) {
    // A refusal is an answer, not a fault: no stack is taken (nobody reads it, and under a burst
    // of shed sends taking and formatting one was a measurable share of each refusal's cost).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }

  get status(): number {
    return errorTable[this.code].status;
  }
}

/** A broken internal rule (an illegal state move): a bug, never the client's fault. */
export class InvariantError extends Error {}

/**
 * A failure already told in the product's words (the contract's `turnErrorMessages`): its message
 * is what a person reads. Raised where what happened is known (a chat's model that was removed);
 * any other error reaches a person only as the wording `turns/failureWording.ts` gives it (F3).
 */
export class WordedFailure extends Error {}

export const notFound = (what: NotFoundSubject = 'thread') =>
  new ApiError('not_found', notFoundMessages[what]);

/** What a request that matches no route gets (h3's own 404 and 405 included). */
export const noSuchRoute = () => notFound('route');

/** `409 not_eligible` with its reason: why the queue head cannot be claimed now. */
export const notEligible = (reason: NotEligibleReason) =>
  new ApiError('not_eligible', notEligibleMessages[reason], { reason });

/** `409 thread_busy` with its reason: what the thread must finish before this change. */
export const threadBusy = (reason: ThreadBusyReason) =>
  new ApiError('thread_busy', threadBusyMessages[reason], { reason });

/** The database cannot be reached: the request may be tried again shortly. */
export const databaseUnavailable = () =>
  new ApiError('unavailable', refusalMessages.unavailable.database, undefined, {
    'retry-after': '2',
  });

/**
 * What the error path tells of a failure that may be the database's: the circuit, which answers
 * whether it was (and opens on it). Named here, not imported, because the circuit refuses with
 * `databaseUnavailable` from this file.
 */
export interface DatabaseFailureRecorder {
  recordFailure(error: unknown): boolean;
}

/**
 * The one place an error becomes a response: a refusal keeps its code, h3's own 4xx become
 * `not_found` / `bad_request`, a database that cannot be reached is `503 unavailable` (logged at
 * warn; it opens the circuit), anything else is logged and answered `500 internal`.
 * `clientGone`: the client went away before its request was read (a closed tab mid-upload). Its
 * socket's reset says nothing of the database's, so it neither opens the circuit nor logs an
 * outage; the answer goes nowhere.
 */
export function errorResponse(
  error: unknown,
  logger: Logger,
  circuit?: DatabaseFailureRecorder,
  context: { clientGone?: boolean } = {},
): Response {
  const refusal = asRefusal(error);
  if (refusal) return refusalResponse(refusal);
  if (context.clientGone) {
    logger.debug({ err: error }, 'client went away');
    return refusalResponse(new ApiError('bad_request'));
  }
  if (circuit ? circuit.recordFailure(error) : isDatabaseUnavailable(error)) {
    logger.warn({ err: error }, 'database unavailable');
    return refusalResponse(databaseUnavailable());
  }
  logger.error({ err: (error as Error | null)?.cause ?? error }, 'unhandled error');
  return refusalResponse(new ApiError('internal'));
}

function asRefusal(error: unknown): ApiError | undefined {
  const cause = error instanceof Error && error.cause instanceof ApiError ? error.cause : error;
  if (cause instanceof ApiError) return cause;
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== 'number') return undefined;
  if (status === 404 || status === 405) return noSuchRoute();
  if (status >= 400 && status < 500) return new ApiError('bad_request', (error as Error).message);
  return undefined;
}

/** The contract's error body of a refusal. */
export function errorBody(error: ApiError): ErrorBody {
  return { error: { ...error.details, code: error.code, message: error.message } };
}

/** The answer of a refusal: its status, its headers, and the contract's error body. */
export function refusalResponse(error: ApiError): Response {
  return Response.json(errorBody(error), { status: error.status, headers: error.headers });
}
