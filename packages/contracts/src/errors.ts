/** Stable error codes of the HTTP contract. Clients switch on these, never on messages. */
export const errorCodes = [
  'bad_request',
  'not_found',
  'method_not_allowed',
  'unauthorized',
  'invalid_credentials',
  'email_taken',
  'guests_disabled',
  'forbidden_origin',
  'queue_full',
  'not_queue_head',
  'not_queued',
  'not_eligible',
  'thread_busy',
  'not_latest_turn',
  'already_decided',
  'too_large',
  'unsupported_media_type',
  'rate_limited',
  'unavailable',
  'overloaded',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** The body of every refusal. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; [detail: string]: unknown };
}

/**
 * One row per code: its HTTP status and the default words a person reads. The API sends these
 * unless a throw site has something more precise to say; the web app shows them for codes it
 * cannot explain better from its own state.
 */
export const errorTable: Record<ErrorCode, { status: number; message: string }> = {
  bad_request: { status: 400, message: 'The request is not valid.' },
  unauthorized: { status: 401, message: 'Sign in first.' },
  // One message for a wrong password and an unknown email: a refusal never tells which.
  invalid_credentials: { status: 401, message: 'Wrong email or password.' },
  email_taken: { status: 409, message: 'An account with this email already exists. Sign in instead.' },
  guests_disabled: { status: 403, message: 'This server needs an account: sign in or sign up.' },
  forbidden_origin: { status: 403, message: 'This request did not come from the app.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed here.' },
  queue_full: {
    status: 409,
    message: 'The queue is full. Wait for a reply, or remove a queued message.',
  },
  not_queue_head: { status: 409, message: 'Only the first queued message can be sent now.' },
  not_queued: { status: 409, message: 'This message is no longer in the queue.' },
  not_eligible: { status: 409, message: 'The queue cannot run its next message right now.' },
  thread_busy: {
    status: 409,
    message: 'Wait until nothing is running or queued before changing versions.',
  },
  not_latest_turn: { status: 409, message: 'Only the latest message can be deleted.' },
  already_decided: { status: 409, message: 'This request was already decided.' },
  too_large: { status: 413, message: 'That is too large.' },
  unsupported_media_type: { status: 415, message: 'This kind of content is not accepted.' },
  rate_limited: { status: 429, message: 'Too many requests. Wait a moment and try again.' },
  unavailable: { status: 503, message: 'The service is briefly unavailable. Try again shortly.' },
  overloaded: { status: 503, message: 'The server is busy. Try again in a moment.' },
};

/** The default message of a code. */
export function errorMessage(code: ErrorCode): string {
  return errorTable[code].message;
}
