import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `pnpm test` runs the quick benchmark through quick.test.ts. However that test ends (its time
 * limit, Ctrl+C), no server the benchmark started may outlive it: not the harness, its embedded
 * PostgreSQL, the baseline, nor the API (a supervisor and its API processes).
 *
 * Each case runs quick.test.ts in a vitest of its own, with a mark in the environment every process
 * it starts inherits, and a temporary directory of its own (the embedded PostgreSQL's data
 * directory is in it, on the postmaster's command line: PostgreSQL writes over its environment's
 * memory to show its status). A process carrying either is one of the run's.
 */

const benchRoot = fileURLToPath(new URL('../', import.meta.url));
const vitest = join(benchRoot, 'node_modules/vitest/vitest.mjs');

interface Marked {
  pid: number;
  kind: 'harness' | 'api' | 'baseline' | 'postgres' | 'other';
}

/** The live processes carrying `mark` in their environment or `dir` on their command line. */
function processesOfRun(mark: string, dir: string): Marked[] {
  const found: Marked[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const environment = readFileSync(`/proc/${entry}/environ`, 'utf8');
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!environment.includes(`BENCH_LEFTOVER_MARK=${mark}`) && !command.includes(dir)) continue;
      // The vitest that runs quick.test.ts (and its workers) is what the case ends: not a leftover.
      if (command.includes('vitest')) continue;
      found.push({ pid: Number(entry), kind: kindOf(command) });
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

function kindOf(command: string): Marked['kind'] {
  if (command.includes('src/main.ts')) return 'harness';
  if (command.includes('dist/main.mjs')) return 'api';
  if (command.includes('baseline.ts')) return 'baseline';
  if (command.includes('postgres')) return 'postgres';
  return 'other';
}

interface InnerRun {
  child: ChildProcess;
  mark: string;
  dir: string;
  exited: Promise<{ code: number | null; output: string }>;
  /** Every kind of process of the run seen so far (sampled every 200 ms). */
  seen: Set<Marked['kind']>;
  /** The API processes seen at once at most (a supervisor and its children). */
  mostApiProcesses: number;
}

let inner: InnerRun | undefined;

/** quick.test.ts's main test in a vitest of its own (a process group of its own, as a terminal's job). */
function runQuickTest(env: Record<string, string>): InnerRun {
  const mark = crypto.randomUUID();
  const dir = mkdtempSync(join(tmpdir(), 'chat-bench-leftovers-'));
  // The embedded PostgreSQL runs as its own user, which must reach its data directory in here.
  chmodSync(dir, 0o755);
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env, BENCH_LEFTOVER_MARK: mark, TMPDIR: dir };
  const child = spawn(process.execPath, [vitest, 'run', 'test/quick.test.ts', '-t', 'runs every scenario'], {
    cwd: benchRoot,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const run: InnerRun = {
    child,
    mark,
    dir,
    seen: new Set(),
    mostApiProcesses: 0,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve({ code, output }))),
  };
  const sampler = setInterval(() => {
    const processes = processesOfRun(mark, dir);
    for (const { kind } of processes) run.seen.add(kind);
    run.mostApiProcesses = Math.max(
      run.mostApiProcesses,
      processes.filter((found) => found.kind === 'api').length,
    );
  }, 200);
  void run.exited.then(() => clearInterval(sampler));
  inner = run;
  return run;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return true;
}

afterEach(async () => {
  const run = inner;
  inner = undefined;
  if (!run) return;
  // Whatever the case found, nothing of it stays on this machine.
  try {
    process.kill(-(run.child.pid as number), 'SIGKILL');
  } catch {
    // Already gone.
  }
  for (const { pid } of processesOfRun(run.mark, run.dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended meanwhile.
    }
  }
  await until(() => processesOfRun(run.mark, run.dir).length === 0, 10_000);
  rmSync(run.dir, { recursive: true, force: true });
}, 30_000);

describe('the quick benchmark test, ended before the benchmark is', () => {
  it('leaves no harness, PostgreSQL, baseline or API process behind when it runs past its time limit', async () => {
    // 40 s: the servers are up and the benchmark is mid-run, far from done.
    const run = runQuickTest({ BENCH_QUICK_TIMEOUT_MS: '40000' });
    const { code, output } = await run.exited;
    expect(code, output).not.toBe(0);
    expect(output).toMatch(/timed out in 40000ms/);
    // The test gave up while the benchmark had servers running: this checks something.
    expect([...run.seen]).toEqual(expect.arrayContaining(['harness', 'postgres']));
    // Its afterEach has ended them all before vitest exited; a moment for /proc to catch up.
    await until(() => processesOfRun(run.mark, run.dir).length === 0, 3_000);
    expect(processesOfRun(run.mark, run.dir)).toEqual([]);
  }, 180_000);

  it('leaves none behind when it is stopped with Ctrl+C mid-run', async () => {
    const run = runQuickTest({});
    // Every kind of server up: PostgreSQL, the baseline and the API.
    const up = await until(
      () => ['postgres', 'baseline', 'api'].every((kind) => run.seen.has(kind as Marked['kind'])),
      150_000,
    );
    expect(up, 'the benchmark started its servers').toBe(true);
    // A terminal's Ctrl+C: SIGINT to its foreground job (vitest and its workers). The harness runs
    // in a process group of its own, so only its parent's going tells it.
    process.kill(-(run.child.pid as number), 'SIGINT');
    await Promise.race([run.exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    // The harness stops what it started (the API's shutdown is bounded at 10 s, PostgreSQL's at 7).
    const ended = await until(() => processesOfRun(run.mark, run.dir).length === 0, 45_000);
    expect(ended ? [] : processesOfRun(run.mark, run.dir)).toEqual([]);
  }, 300_000);
});
