import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Fields that may hold what people wrote (message text, titles, request bodies) or SQL parameters:
 * never written to the log at any level.
 */
const REDACTED = [
  'text',
  'title',
  'body',
  'params',
  'parameters',
  'partialText',
  '*.text',
  '*.title',
  '*.body',
  '*.params',
  '*.parameters',
  '*.partialText',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'api' },
      serializers: { err: serializeError, error: serializeError },
      redact: { paths: REDACTED, censor: '[redacted]' },
    },
    destination,
  );
}

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  stack?: unknown;
  cause?: unknown;
  query?: unknown;
  params?: unknown;
  parameters?: unknown;
  severity?: unknown;
  routine?: unknown;
}

/**
 * An error as the log keeps it: type, code and message, and the stack frames, through its causes.
 * A failed query keeps its SQL (placeholders only), never its parameters: Drizzle puts them in its
 * message, postgres.js and node-postgres attach them (and row values in `detail`), and any of them
 * can be a person's message. A server error message that quotes a value is cut before the quote.
 */
export function serializeError(error: unknown, depth = 0): unknown {
  if (!error || typeof error !== 'object') return error;
  const e = error as ErrorLike;
  const type = error.constructor?.name ?? (typeof e.name === 'string' ? e.name : 'Error');
  const isQueryError = 'params' in e || 'parameters' in e || (typeof e.query === 'string' && 'cause' in e);
  const isServerError = typeof e.severity === 'string' || typeof e.routine === 'string';
  let message = typeof e.message === 'string' ? e.message : '';
  if (isQueryError) message = typeof e.query === 'string' ? `Failed query: ${e.query}` : 'Failed query';
  else if (isServerError) message = withoutQuotedValue(message);
  const out: Record<string, unknown> = { type, message };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = e.code;
  if (typeof e.stack === 'string') out.stack = framesOf(e.stack);
  if (e.cause !== undefined && depth < 5) out.cause = serializeError(e.cause, depth + 1);
  return out;
}

/** The "at ..." lines only: the first line of a stack repeats the message. */
function framesOf(stack: string): string {
  return stack
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '))
    .join('\n');
}

function withoutQuotedValue(message: string): string {
  const quote = message.search(/["']/);
  return quote < 0 ? message : `${message.slice(0, quote).trimEnd()} [value redacted]`;
}
