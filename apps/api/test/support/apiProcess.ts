import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '@chat/db';
import { TEST_ENV } from './testApi';

const apiDir = fileURLToPath(new URL('../../', import.meta.url));

export interface ApiProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Every line the process wrote to stdout and stderr, when started with `captureOutput`. */
  output: string[];
  /** SIGKILL: the process dies mid-whatever, like a crash or an OOM kill. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The API as its own OS process (`src/main.ts`), for crash tests. With `captureOutput` its stdout
 * and stderr are kept line by line in `output` (what an operator's log would hold), not shown.
 */
export async function startApiProcess(
  env: Record<string, string>,
  options: { captureOutput?: boolean; startTimeoutMs?: number } = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: apiDir,
    env: {
      ...process.env,
      ...TEST_ENV,
      API_PORT: String(port),
      API_HOST: '127.0.0.1',
      LOG_LEVEL: process.env.API_TEST_LOG ?? 'warn',
      ...env,
    },
    stdio: ['ignore', options.captureOutput ? 'pipe' : 'inherit', options.captureOutput ? 'pipe' : 'inherit'],
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (data: string) => {
      const lines = (pending + data).split('\n');
      pending = lines.pop() ?? '';
      output.push(...lines);
    });
    stream?.on('end', () => {
      if (pending) output.push(pending);
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  // Generous: a loaded machine (parallel test files, two cores) can take over a minute to start one.
  const deadline = Date.now() + (options.startTimeoutMs ?? 150_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`api process exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error('api process did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl,
    child,
    output,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
