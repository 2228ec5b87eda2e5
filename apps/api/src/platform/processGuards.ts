import { isDatabaseUnavailable } from './databaseErrors';
import type { Logger } from './logger';

/**
 * Last-resort handlers for errors nothing else caught. A rejected promise nobody awaited is logged
 * and the process stays up (every request and background task has its own handling; this is a
 * missed one). An uncaught exception from a lost database connection is logged and the process
 * stays up too (the connection is dropped and made again); any other leaves the process in an
 * unknown state, so it is logged and the process exits for the supervisor to restart it. The
 * logger's error serializer keeps message text and SQL parameters out (`platform/logger.ts`).
 */
export function installProcessGuards(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection; still running');
  });
  process.on('uncaughtException', (error) => {
    if (writeAfterClose(error)) {
      logger.warn(
        { driverDefect: 'postgres.js write after close' },
        'database driver wrote to a connection that had closed; its queries failed with the close; still running',
      );
      return;
    }
    if (isDatabaseUnavailable(error) || thrownByDatabaseDriver(error)) {
      logger.error({ err: error }, 'database connection error; still running');
      return;
    }
    logger.fatal({ err: error }, 'uncaught exception; exiting');
    process.exit(1);
  });
}

/**
 * postgres.js can throw from a socket callback of a connection that just broke (a write after the
 * reset); only that connection is affected, and the driver makes a new one.
 */
function thrownByDatabaseDriver(error: Error): boolean {
  const frames = (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '));
  return (
    frames.length > 0 &&
    /[/\\]node_modules[/\\](\.pnpm[/\\][^/\\]+[/\\]node_modules[/\\])?postgres[/\\]/.test(frames[0] ?? '')
  );
}

/**
 * postgres.js (3.4.x, an open upstream defect) batches small writes on `setImmediate`; when the
 * connection closes before the batch goes out (a database that stops or restarts), the batch
 * writes to the socket that is gone and throws from the timer: `Cannot read properties of null
 * (reading 'write')` at `nextWrite`. The close has already failed that connection's queries
 * (`CONNECTION_CLOSED`, which callers handle as the database being away), and the driver makes a
 * new connection; the throw itself carries nothing more. Matched narrowly (the error, the message
 * and the driver's own frame on top), so anything else the driver throws is still logged whole.
 */
function writeAfterClose(error: Error): boolean {
  const top = (error.stack ?? '').split('\n').find((line) => line.trimStart().startsWith('at '));
  return (
    error instanceof TypeError &&
    error.message === "Cannot read properties of null (reading 'write')" &&
    top !== undefined &&
    /\bnextWrite\b/.test(top) &&
    /[/\\]node_modules[/\\](\.pnpm[/\\][^/\\]+[/\\]node_modules[/\\])?postgres[/\\]src[/\\]connection\.js:/.test(
      top,
    )
  );
}
