import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benchRoot = fileURLToPath(new URL('../', import.meta.url));

export interface HarnessRun {
  child: ChildProcess;
  /** Resolves when the harness exits, with what it printed. */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** What it has printed to stderr so far (its progress log). */
  stderr(): string;
}

/**
 * Runs `pnpm bench` with `args` in a process group of its own: the servers it starts (API,
 * baseline, web, PostgreSQL) join that group, so `endHarness` can end all of them even when the
 * harness cannot clean up itself (a test that timed out, a harness killed hard).
 */
export function startHarness(args: string[]): HarnessRun {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: benchRoot,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone.
  }
}

/** The live processes of process group `pgid` (from /proc: field 5 of stat is the group). */
export function processesInGroup(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] is the state: a zombie has exited and only waits to be reaped.
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return members;
}

/**
 * Ends the harness and every server it started. SIGTERM to the whole group first (the harness
 * stops its servers and drops its database), then SIGKILL for whatever is left after 20 s.
 */
export async function endHarness(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signalGroup(pid, 'SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
  }
  signalGroup(pid, 'SIGKILL');
  // SIGKILL is delivered at once, but the processes leave /proc a moment later.
  for (let i = 0; i < 50 && processesInGroup(pid).length > 0; i++)
    await new Promise((r) => setTimeout(r, 100));
}
