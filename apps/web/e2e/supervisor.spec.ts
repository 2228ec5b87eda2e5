import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from './fixtures';
import { freePort } from './support/ownServers';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** `node scripts/start.mjs` (production mode, the built web app) with its own ports and data. */
function startScript(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', LOCAL_MODEL_DELAY_MS: '30', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { child, output: () => output };
}

/** The pid of the child of `parentPid` whose command line contains `marker` (Linux /proc). */
function childPid(parentPid: number, marker: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== parentPid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

test.describe('pnpm start (scripts/start.mjs)', () => {
  test('restarts the API after it is killed, says why, and keeps the web app up', async () => {
    test.setTimeout(180_000);
    const [apiPort, webPort] = [await freePort(), await freePort()];
    const dataDir = path.join(repoRoot, '.data', `e2e-start-${apiPort}-${Date.now()}`);
    const web = `http://127.0.0.1:${webPort}`;
    const script = startScript({
      API_PORT: String(apiPort),
      WEB_PORT: String(webPort),
      WEB_ORIGIN: web,
      DATA_DIR: dataDir,
    });
    try {
      await expect.poll(script.output, { timeout: 120_000 }).toContain('[start] ready');
      const apiPid = childPid(script.child.pid as number, 'dist/main.mjs');
      expect(apiPid).toBeDefined();

      process.kill(apiPid as number, 'SIGKILL');
      await expect
        .poll(script.output)
        .toMatch(/api stopped: it was killed \(SIGKILL[^)]*\)\. Restarting it in 1 s/);
      // The web app is still there while the API is away, and says so in JSON.
      expect((await fetch(`${web}/`)).status).toBe(200);
      await expect.poll(script.output, { timeout: 60_000 }).toContain('[start] api is back.');
      expect((await fetch(`${web}/api/health`)).status).toBe(200);
      expect(script.child.exitCode).toBeNull();
    } finally {
      script.child.kill('SIGTERM');
      await exited(script.child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a first start that fails stops with the cause, instead of leaving a dead app', async () => {
    const port = await freePort();
    const script = startScript({ API_PORT: 'not-a-port', WEB_PORT: String(port) });
    expect(await exited(script.child)).toBe(1);
    expect(script.output()).toContain('API_PORT');
    expect(script.output()).toContain('[start] api could not start: it exited with code 1.');
  });
});
