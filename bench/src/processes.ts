import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_NODE_FLAGS } from '../../apps/api/nodeFlags.mjs';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const benchRoot = fileURLToPath(new URL('../', import.meta.url));

/** A server the harness started as a child process. */
export interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  /**
   * Resident memory in bytes (VmRSS) of the process and every process under it (a supervisor's API
   * processes), summed; NaN once it has exited.
   */
  rss(): number;
  /**
   * CPU time (user + system) used so far by the process and every live process under it, summed,
   * in milliseconds; NaN once it has exited.
   */
  cpuMs(): number;
  /** The process and every live process under it, each with its own CPU time and memory now. */
  processes(): ProcessSample[];
  stop(): Promise<void>;
}

/** One process of a server's tree at one moment. */
export interface ProcessSample {
  pid: number;
  /** `cpuMsOf` now. */
  cpuMs: number;
  /** `rssOf` now, in bytes. */
  rss: number;
}

/**
 * The live children of `pid`: `/proc/PID/task/TID/children` of each of its threads (a child forked
 * from any thread is listed under that thread), or, where the kernel has no such file, every
 * process whose parent (field 4 of `/proc/PID/stat`) is `pid`. A zombie has ended: not counted.
 */
export function childrenOf(pid: number): number[] {
  const children = new Set<number>();
  try {
    for (const task of readdirSync(`/proc/${pid}/task`))
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/))
        if (child !== '') children.add(Number(child));
    return [...children].filter((child) => stateOf(child) !== 'Z' && stateOf(child) !== undefined);
  } catch {
    // No children files here (or the process ended): read every process's parent instead.
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === pid && fields[0] !== 'Z') children.add(Number(entry));
  }
  return [...children];
}

/** A process and all its live descendants, the process first. */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let index = 0; index < tree.length; index++) tree.push(...childrenOf(tree[index] as number));
  return tree;
}

/** `/proc/PID/stat`'s fields after the command name (state first), or undefined once it has ended. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function stateOf(pid: number): string | undefined {
  return statFields(pid)?.[0];
}

function sampleTree(pid: number | undefined): ProcessSample[] {
  if (pid === undefined) return [];
  return processTree(pid).map((member) => ({ pid: member, cpuMs: cpuMsOf(member), rss: rssOf(member) }));
}

/** The sum of `pick` over a tree's live members (one that ended between the listing and the read: 0). */
function sumOf(samples: ProcessSample[], pick: (sample: ProcessSample) => number): number {
  if (samples.length === 0) return Number.NaN;
  const [root, ...rest] = samples;
  return pick(root as ProcessSample) + rest.reduce((total, sample) => total + (pick(sample) || 0), 0);
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux build that matters). */
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/**
 * CPU time of a process so far, user plus system, in milliseconds (`/proc/PID/stat` fields 14 and
 * 15). Process CPU time, unlike wall time, does not grow when other work shares the machine.
 */
export function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const fields = statFields(pid);
  if (!fields) return Number.NaN;
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

export function rssOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function waitUntilUp(child: ChildProcess, url: string, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before listening`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startServer(options: {
  name: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  port: number;
  healthPath: string;
  timeoutMs?: number;
  /** Where the server's stdout goes (its log); discarded when absent. */
  logFile?: string;
}): Promise<ServerProcess> {
  const stdout = options.logFile ? openSync(options.logFile, 'w') : 'ignore';
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', stdout, 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${options.port}`;
  try {
    await waitUntilUp(child, `${baseUrl}${options.healthPath}`, options.name, options.timeoutMs ?? 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    baseUrl,
    child,
    rss: () => (child.exitCode === null ? sumOf(sampleTree(child.pid), (sample) => sample.rss) : Number.NaN),
    cpuMs: () =>
      child.exitCode === null ? sumOf(sampleTree(child.pid), (sample) => sample.cpuMs) : Number.NaN,
    processes: () => (child.exitCode === null ? sampleTree(child.pid) : []),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // A supervisor ends its API processes itself; any it left (it was killed) are ended here.
      const tree = processTree(child.pid as number).slice(1);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      for (const pid of tree) {
        if (stateOf(pid) === undefined || stateOf(pid) === 'Z') continue;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Ended meanwhile.
        }
      }
    },
  };
}

export function startBaseline(port: number): Promise<ServerProcess> {
  return startServer({
    name: 'baseline',
    args: ['--import', 'tsx', 'src/servers/baseline.ts'],
    cwd: benchRoot,
    env: { BASELINE_PORT: String(port), LOCAL_MODEL_DELAY_MS: '0' },
    port,
    healthPath: '/health',
  });
}

/** The API this harness runs: this checkout's, or `--api-dir` (another checkout's, to compare). */
export const defaultApiDir = join(repoRoot, 'apps/api');

/** Builds the API's bundle (`dist/main.mjs`) from the sources of `apiDir`. */
function buildApi(apiDir: string): void {
  const built = spawnSync(process.execPath, ['build.mjs'], {
    cwd: apiDir,
    stdio: 'inherit',
  });
  if (built.status !== 0) throw new Error(`the API build failed (exit ${built.status})`);
}

/**
 * The real API, built and started the way `pnpm start` starts it (`node dist/main.mjs` with the
 * API's Node flags, apps/api/nodeFlags.mjs; for `--api-dir` too, so a before/after compares code), on the
 * harness's own database and a temporary data directory. `cpuProfileDir` adds `--cpu-prof`.
 */
export async function startApi(options: {
  port: number;
  databaseUrl: string;
  webOrigin: string;
  cpuProfileDir?: string;
  /** The API's log (warnings and errors; never message text). */
  logFile?: string;
  /** The `apps/api` directory to run (default: this checkout's). */
  apiDir?: string;
  /** Build it first (default); a second instance of the same build skips it. */
  build?: boolean;
  /** More environment (the instance's own start-slot settings, say). */
  env?: Record<string, string>;
  /**
   * API_PROCESSES: 1 (default) runs one process, whose CPU and memory the single-process figures
   * and their baselines were taken on; more runs a supervisor forking that many API processes on
   * the port (L2), as `pnpm start` does by default (one per core).
   */
  processes?: number;
}): Promise<ServerProcess & { dataDir: string }> {
  const apiDir = options.apiDir ?? defaultApiDir;
  if (options.build !== false) buildApi(apiDir);
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-bench-data-'));
  const profile = options.cpuProfileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`, '--cpu-prof-interval=2000']
    : [];
  const server = await startServer({
    name: 'api',
    args: [...profile, ...API_NODE_FLAGS, 'dist/main.mjs'],
    cwd: apiDir,
    env: {
      API_PORT: String(options.port),
      API_HOST: '127.0.0.1',
      DATABASE_URL: options.databaseUrl,
      DATA_DIR: dataDir,
      LOCAL_MODEL_DELAY_MS: '0',
      LOG_LEVEL: 'warn',
      API_PROCESSES: String(options.processes ?? 1),
      WEB_ORIGIN: options.webOrigin,
      BETTER_AUTH_SECRET: 'bench-secret-bench-secret-bench-secret-01',
      MASTRA_TELEMETRY_DISABLED: '1',
      // The harness is one client doing what hundreds of people would: no per-client limits.
      RATE_LIMIT_GUESTS_PER_IP: '0',
      RATE_LIMIT_SIGN_INS_PER_IP: '0',
      RATE_LIMIT_FAILED_SIGN_INS: '0',
      RATE_LIMIT_FAILED_SIGN_INS_PER_EMAIL: '0',
      RATE_LIMIT_THREADS_PER_ACCOUNT: '0',
      RATE_LIMIT_SENDS_PER_ACCOUNT: '0',
      RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '0',
      ...options.env,
    },
    port: options.port,
    healthPath: '/api/health',
    logFile: options.logFile,
  });
  return {
    ...server,
    dataDir,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** How many processes serve the API's port: a supervisor's children, or the one process alone. */
export function servingProcesses(server: ServerProcess): number {
  return Math.max(1, server.processes().length - 1);
}

/** "on 2 API processes" for a row's figure. */
export function onProcesses(server: ServerProcess): string {
  const count = servingProcesses(server);
  return `on ${count} API process${count === 1 ? '' : 'es'}`;
}

/**
 * Waits until a supervisor runs `count` API processes and each has finished starting. The port
 * answers as soon as the first one listens; a process still loading its modules spends its CPU
 * on that (a second or more), so "started" is: present, and under a tenth of a core over 500 ms.
 */
export async function untilProcessesStarted(server: ServerProcess, count: number, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = server.processes().slice(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = new Map(server.processes().map((sample) => [sample.pid, sample.cpuMs]));
    const idle = before.filter((sample) => (after.get(sample.pid) ?? Number.NaN) - sample.cpuMs < 50);
    if (before.length >= count && idle.length >= count) return;
    if (Date.now() > deadline)
      throw new Error(
        `the API did not start ${count} processes within ${timeoutMs} ms (${before.length} seen)`,
      );
  }
}

/** The production build of the web app (`.output`), proxying `/api` to the API. */
export function startWeb(port: number, apiOrigin: string): Promise<ServerProcess> {
  return startServer({
    name: 'web',
    args: ['.output/server/index.mjs'],
    cwd: join(repoRoot, 'apps/web'),
    env: { PORT: String(port), HOST: '127.0.0.1', NITRO_HOST: '127.0.0.1', NUXT_API_ORIGIN: apiOrigin },
    port,
    healthPath: '/',
  });
}
