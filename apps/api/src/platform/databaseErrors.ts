/**
 * Whether an error means the database cannot be reached right now (down, restarting, refusing
 * connections), as opposed to a query that is wrong: those requests get `503 unavailable`.
 * Looks through wrappers (h3, Drizzle, Mastra, better-auth keep the original as `cause`).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    if (isConnectionError(current as { code?: unknown; message?: unknown })) return true;
    const nested = (current as { errors?: unknown }).errors;
    if (Array.isArray(nested) && nested.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

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
  const code = typeof error.code === 'string' ? error.code : '';
  // SQLSTATE class 08: connection exception.
  if (CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  return typeof error.message === 'string' && CONNECTION_MESSAGES.test(error.message);
}
