/**
 * Whether an error means the database cannot be reached right now (down, restarting, refusing
 * connections), as opposed to a query that is wrong: those requests get `503 unavailable`.
 * Looks through wrappers (h3, Drizzle, Mastra, better-auth keep the original as `cause`).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return someInChain(error, isConnectionError);
}

/**
 * Whether an error is one the database recovers from by itself, so the work is worth waiting for
 * (F1): it cannot be reached (`isDatabaseUnavailable`), or it refused a transaction only for racing
 * another one (a serialization failure, a deadlock). Anything else fails the same way on every try.
 */
export function isPassingDatabaseError(error: unknown): boolean {
  return isDatabaseUnavailable(error) || someInChain(error, (inner) => RACE_CODES.has(codeOf(inner)));
}

/**
 * Whether an error came from the database or its driver, whatever it says (F3: such text never
 * reaches a person): a connection error, a server error (a SQLSTATE, postgres.js' and node-postgres'
 * `severity` and `routine`), a failed query (Drizzle's `query`), or Mastra's storage wrapping one.
 */
export function isDatabaseError(error: unknown): boolean {
  return someInChain(error, (inner) => {
    const e = inner as { severity?: unknown; routine?: unknown; query?: unknown; domain?: unknown };
    return (
      isConnectionError(inner) ||
      /^[0-9A-Z]{5}$/.test(codeOf(inner)) ||
      typeof e.severity === 'string' ||
      typeof e.routine === 'string' ||
      typeof e.query === 'string' ||
      e.domain === 'STORAGE'
    );
  });
}

/** Whether `test` holds for the error or anything it wraps (`cause`, an aggregate's `errors`). */
function someInChain(
  error: unknown,
  test: (error: { code?: unknown; message?: unknown }) => boolean,
): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    if (test(current as { code?: unknown; message?: unknown })) return true;
    const nested = (current as { errors?: unknown }).errors;
    if (Array.isArray(nested) && nested.some((inner) => someInChain(inner, test))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function codeOf(error: { code?: unknown }): string {
  return typeof error.code === 'string' ? error.code : '';
}

/** SQLSTATE: a transaction refused only because another ran at the same time. */
const RACE_CODES = new Set(['40001', '40P01']);

/** postgres.js and Node socket codes for a connection that failed or broke. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  // Ours (`HangWatch`): the database did not answer in time, the connection was cut.
  'DATABASE_HUNG',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // PostgreSQL: shutting down, crashed, starting up, too many connections.
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** node-postgres (Mastra's driver) says it in words only. */
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)/i;

function isConnectionError(error: { code?: unknown; message?: unknown }): boolean {
  const code = codeOf(error);
  // SQLSTATE class 08: connection exception.
  if (CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  // A Unix socket whose server stopped is gone: connecting to it fails with ENOENT (a server that
  // crashed leaves it behind, ECONNREFUSED). Only a connect says so: a missing file is no outage.
  if (code === 'ENOENT' && (error as { syscall?: unknown }).syscall === 'connect') return true;
  return typeof error.message === 'string' && CONNECTION_MESSAGES.test(error.message);
}
