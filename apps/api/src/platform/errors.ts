import { type ErrorBody, type ErrorCode, statusOfErrorCode } from '@chat/contracts';

/** A refusal the client caused; carries a stable code from the contract. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get status(): number {
    return statusOfErrorCode[this.code];
  }
}

/** A broken internal rule (an illegal state move): a bug, never the client's fault. */
export class InvariantError extends Error {}

export const notFound = (what = 'Thread') => new ApiError('not_found', `${what} not found.`);

export function errorResponse(code: ErrorCode | 'internal', message: string, status: number, extra = {}) {
  const body: ErrorBody | { error: { code: 'internal'; message: string } } = {
    error: { code, message, ...extra } as ErrorBody['error'],
  };
  return Response.json(body, { status });
}

export function apiErrorResponse(error: ApiError): Response {
  return errorResponse(error.code, error.message, error.status, error.details);
}
