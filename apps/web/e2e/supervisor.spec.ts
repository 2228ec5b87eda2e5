import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/** Whether `pid` is a process that has not ended (a zombie has: it only waits to be collected). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '');
  } catch {
    return false;
  }
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

  test('on SIGTERM exits only after both services have ended, killing one that does not stop in time', async () => {
    test.setTimeout(180_000);
    const [apiPort, webPort] = [await freePort(), await freePort()];
    const dataDir = path.join(repoRoot, '.data', `e2e-stop-${apiPort}-${Date.now()}`);
    const script = startScript({
      API_PORT: String(apiPort),
      WEB_PORT: String(webPort),
      WEB_ORIGIN: `http://127.0.0.1:${webPort}`,
      DATA_DIR: dataDir,
    });
    let apiPid: number | undefined;
    try {
      await expect.poll(script.output, { timeout: 120_000 }).toContain('[start] ready');
      apiPid = childPid(script.child.pid as number, 'dist/main.mjs');
      const webPid = childPid(script.child.pid as number, '.output/server/index.mjs');
      expect(apiPid).toBeDefined();
      expect(webPid).toBeDefined();
      // An API that cannot act on SIGTERM (hung, here frozen) must not outlive the script.
      process.kill(apiPid as number, 'SIGSTOP');
      script.child.kill('SIGTERM');
      await exited(script.child);
      expect(isRunning(apiPid as number)).toBe(false);
      expect(isRunning(webPid as number)).toBe(false);
      expect(script.output()).toContain('[start] api did not stop within 15 s of SIGTERM; killing it.');
    } finally {
      if (apiPid !== undefined && isRunning(apiPid)) process.kill(apiPid, 'SIGKILL');
      if (script.child.exitCode === null) script.child.kill('SIGKILL');
      // The killed API's embedded PostgreSQL outlives it (the next start would stop it): stop it here.
      const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
      const postmaster = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
      if (postmaster > 0 && isRunning(postmaster)) process.kill(postmaster, 'SIGINT');
      await expect.poll(() => postmaster > 0 && isRunning(postmaster), { timeout: 30_000 }).toBe(false);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a .env file configures a fresh start: the script and both services read it, and a variable already set wins', async () => {
    test.setTimeout(180_000);
    const [apiPort, webPort] = [await freePort(), await freePort()];
    const dataDir = path.join(repoRoot, '.data', `e2e-env-${apiPort}-${Date.now()}`);
    const web = `http://127.0.0.1:${webPort}`;
    const envFile = path.join(tmpdir(), `e2e-env-${apiPort}-${Date.now()}.env`);
    writeFileSync(
      envFile,
      [
        '# Where everything runs: read by the script itself (its ports) and the API.',
        `API_PORT=${apiPort}`,
        `WEB_PORT=${webPort}`,
        `WEB_ORIGIN=${web}`,
        `DATA_DIR=${dataDir}`,
        'AUTH_ALLOW_SIGNUP=false',
        'AUTH_ALLOW_GUESTS=false',
      ].join('\n'),
    );
    // Only the file's name and one variable that overrides it come from the environment.
    const script = startScript({ ENV_FILE: envFile, AUTH_ALLOW_GUESTS: 'true' });
    try {
      await expect.poll(script.output, { timeout: 120_000 }).toContain('[start] ready');
      const settings = await fetch(`${web}/api/server-settings`);
      expect(await settings.json()).toEqual({ guestsAllowed: true, signUpAllowed: false });
    } finally {
      script.child.kill('SIGTERM');
      await exited(script.child);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(envFile, { force: true });
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
