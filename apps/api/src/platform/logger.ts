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
 * A wrapper that copied such a message (h3's HTTPError, better-auth's APIError) gets the cut one.
 */
export function serializeError(error: unknown): unknown {
  return serializeChain(error, unsafeMessagesOf(error), 0);
}

function serializeChain(error: unknown, unsafe: Map<string, string>, depth: number): unknown {
  if (!error || typeof error !== 'object') return error;
  const e = error as ErrorLike;
  const type = error.constructor?.name ?? (typeof e.name === 'string' ? e.name : 'Error');
  const out: Record<string, unknown> = { type, message: safeMessage(e, unsafe) };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = e.code;
  if (typeof e.stack === 'string') out.stack = framesOf(e.stack);
  if (e.cause !== undefined && depth < 5) out.cause = serializeChain(e.cause, unsafe, depth + 1);
  return out;
}

function isQueryError(e: ErrorLike): boolean {
  return 'params' in e || 'parameters' in e || (typeof e.query === 'string' && 'cause' in e);
}

function isServerError(e: ErrorLike): boolean {
  return typeof e.severity === 'string' || typeof e.routine === 'string';
}

/** The message of a query or server error as it may be logged. */
function ownSafeMessage(e: ErrorLike): string | undefined {
  const message = typeof e.message === 'string' ? e.message : '';
  if (isQueryError(e)) {
    const failed = typeof e.query === 'string' ? `Failed query: ${e.query}` : 'Failed query';
    // postgres.js puts the query on the server's own error: what the server said is kept too, cut
    // before any value it quotes, as for any server error.
    return isServerError(e) && message !== '' ? `${failed}\n${withoutQuotedValue(message)}` : failed;
  }
  if (isServerError(e)) return withoutQuotedValue(message);
  return undefined;
}

/** Raw message -> safe message, for every query or server error in the chain. */
function unsafeMessagesOf(error: unknown): Map<string, string> {
  const unsafe = new Map<string, string>();
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth <= 5; depth++) {
    const e = current as ErrorLike;
    const safe = ownSafeMessage(e);
    if (safe !== undefined && typeof e.message === 'string' && e.message !== '') unsafe.set(e.message, safe);
    current = e.cause;
  }
  return unsafe;
}

function safeMessage(e: ErrorLike, unsafe: Map<string, string>): string {
  const own = ownSafeMessage(e);
  if (own !== undefined) return own;
  let message = typeof e.message === 'string' ? e.message : '';
  for (const [raw, safe] of unsafe) message = message.replaceAll(raw, safe);
  // Drizzle's own wording, should a copy of it have been cut or reworded on the way.
  return message.replace(/\nparams: [\s\S]*$/, '');
}

/** The "at ..." lines only: the first line of a stack repeats the message. */
function framesOf(stack: string): string {
  return stack
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '))
    .join('\n');
}

/** `message` cut before its first quote, where a server error starts quoting a value. */
export function withoutQuotedValue(message: string): string {
  const quote = message.search(/["']/);
  return quote < 0 ? message : `${message.slice(0, quote).trimEnd()} [value redacted]`;
}
