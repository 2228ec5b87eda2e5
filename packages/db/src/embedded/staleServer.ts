import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

/**
 * A PostgreSQL server outlives the process that started it when that process is killed hard
 * (`kill -9`, an OOM kill): the server keeps running on our data directory and every later start
 * fails on its `postmaster.pid`. These functions find such a server and stop it.
 *
 * Whose server is it? The starting process writes its pid to OWNER_FILE. While that process lives,
 * it is the server's parent; once it has died, the server has been handed to another parent. So a
 * server whose parent is not the recorded owner is stale, and one whose parent is the recorded,
 * living owner belongs to another process using the same data directory, which is refused.
 */
const OWNER_FILE = 'embedded-owner.pid';

interface ProcessInfo {
  alive: boolean;
  parentPid?: number;
  /** argv, when the platform tells (Linux's /proc). */
  argv?: string[];
}

function processInfo(pid: number): ProcessInfo {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return { alive: false };
  }
  if (!existsSync('/proc/self/stat')) return { alive: true };
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie has exited; it only waits for its parent to collect it.
    if (state === 'Z' || state === 'X') return { alive: false };
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { alive: true, parentPid: Number(ppid), argv };
  } catch {
    return { alive: false };
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] ?? '', 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Is `info` a postgres server of `dataDir`? Without /proc, a living pid of the lock file counts. */
function isOurServer(info: ProcessInfo, dataDir: string): boolean {
  if (!info.argv) return info.alive;
  const [program, ...args] = info.argv;
  const dataDirArg = args[args.indexOf('-D') + 1];
  return (
    basename(program ?? '') === 'postgres' && dataDirArg !== undefined && resolve(dataDirArg) === dataDir
  );
}

async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
  return true;
}

/**
 * Clears the way for a start in `dataDir`: stops a server left behind by a dead owner (fast
 * shutdown, which rolls back open transactions and writes a checkpoint), removes a lock file whose
 * pid now names another program, and refuses when a living process still owns the server.
 */
export async function stopStaleServer(dataDirInput: string, log: (message: string) => void): Promise<void> {
  const dataDir = resolve(dataDirInput);
  const lockFile = join(dataDir, 'postmaster.pid');
  const pid = readPid(lockFile);
  if (pid === undefined) return;
  const server = processInfo(pid);
  if (!server.alive) {
    // PostgreSQL replaces the lock file of a dead process itself, but not of a zombie (an exited
    // server whose new parent does not collect it), which still answers kill(pid, 0).
    rmSync(lockFile, { force: true });
    return;
  }
  if (!isOurServer(server, dataDir)) {
    log(`removing ${lockFile}: its pid ${pid} now belongs to another program`);
    rmSync(lockFile, { force: true });
    return;
  }
  const owner = readPid(join(dataDir, OWNER_FILE));
  if (owner !== undefined && server.parentPid === owner && processInfo(owner).alive)
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} is already running for process ${owner}. ` +
        'Two instances cannot share one embedded data directory: stop the other one, give this one ' +
        'its own DATA_DIR, or point both at one server with DATABASE_URL.',
    );
  log(`stopping the embedded PostgreSQL (pid ${pid}) left running by a process that ended`);
  const gone = () => !processInfo(pid).alive || !existsSync(lockFile);
  process.kill(pid, 'SIGINT'); // fast shutdown
  let stopped = await waitUntil(gone, 30_000);
  if (!stopped) {
    process.kill(pid, 'SIGQUIT'); // immediate shutdown: recovery runs on the next start
    stopped = await waitUntil(gone, 10_000);
  }
  if (stopped) {
    rmSync(lockFile, { force: true }); // in case the server ended as an uncollected zombie
    return;
  }
  throw new Error(
    `the embedded PostgreSQL left running in ${dataDir} (pid ${pid}) did not stop; stop it by hand`,
  );
}

/** Records this process as the owner of the server it is about to start in `dataDir`. */
export function recordOwner(dataDir: string): void {
  writeFileSync(join(dataDir, OWNER_FILE), `${process.pid}\n`);
}
