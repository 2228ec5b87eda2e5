/** Stable error codes of the HTTP contract. Clients switch on these, never on messages. */
export const errorCodes = [
  'bad_request',
  'not_found',
  'unauthorized',
  'queue_full',
  'not_queue_head',
  'not_queued',
  'not_eligible',
  'thread_busy',
  'not_latest_turn',
  'too_large',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** The body of every refusal. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

export const statusOfErrorCode: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  not_found: 404,
  queue_full: 409,
  not_queue_head: 409,
  not_queued: 409,
  not_eligible: 409,
  thread_busy: 409,
  not_latest_turn: 409,
  too_large: 413,
};
