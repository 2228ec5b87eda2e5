import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './platform/config';
import { type Logger, withoutQuotedValue } from './platform/logger';

// What the supervisor and an API process share in starting and ending. It is kept apart from the
// runtime so the supervisor loads only this: importing the runtime would load every framework the
// API runs (Mastra, the AI SDK, auth), about 150 MB of resident memory in a process that serves no
// request.

/**
 * A shutdown ends within this, whatever state the database connections are in: past it, what is
 * left is abandoned and the process exits (a reply cut off is settled as interrupted by the next
 * instance's sweeper once its lease runs out).
 */
export const SHUTDOWN_BOUND_MS = 10_000;

/**
 * Says the process is shutting down and holds it to the bound: past SHUTDOWN_BOUND_MS it exits,
 * whatever is left. Returns the deadline (epoch ms) for the steps to share.
 */
export function beginShutdown(logger: Logger, signal: string): number {
  logger.info({ signal }, 'shutting down');
  setTimeout(() => {
    logger.error({ boundMs: SHUTDOWN_BOUND_MS }, 'shutdown did not finish in time; exiting now');
    process.exit(1);
  }, SHUTDOWN_BOUND_MS).unref();
  return Date.now() + SHUTDOWN_BOUND_MS;
}

/** BETTER_AUTH_SECRET, or one generated once and kept under DATA_DIR so sessions survive restarts. */
export function authSecret(config: Config): string {
  if (config.BETTER_AUTH_SECRET) return config.BETTER_AUTH_SECRET;
  const file = join(config.DATA_DIR, 'auth-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.DATA_DIR, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** What `@chat/db`'s embedded server says itself, as opposed to PostgreSQL's own output. */
const OPERATOR_NOTES =
  /^(stopping the embedded PostgreSQL|removing \S+: its pid|replaced the old fixed superuser password|the embedded PostgreSQL now checks passwords)/;

/** Where the embedded PostgreSQL's output goes: the operator's notes at info, the rest at debug. */
export function embeddedPostgresLog(logger: Logger): (message: string) => void {
  return (message) => {
    const text = message.trim();
    // Our own notes (a stale server stopped, a password moved) matter to an operator; PostgreSQL's
    // chatter does not.
    if (OPERATOR_NOTES.test(text)) logger.info({ postgres: text }, 'embedded PostgreSQL');
    // An error line can quote a value (`invalid input syntax for type uuid: "..."`): cut there.
    else logger.debug({ postgres: withoutQuotedValue(text) });
  };
}
