#!/usr/bin/env node
// Starts the API and the web app together and keeps them up.
//   node scripts/start.mjs         production: the built API and web app (run `pnpm build` first; `pnpm start` does)
//   node scripts/start.mjs --dev   development: API with reload, Nuxt dev server
//
// Production mode is a small supervisor: a service that stops after it was up is started again,
// after 1 s, then 2, 4, ... up to 30 s between attempts (back to 1 s once it has stayed up for a
// minute); it gives up after 10 failed attempts in a row. Meanwhile the other service keeps
// running (the web app answers API requests with `503 unavailable`). A first start that fails
// stops everything: the cause is the service's own error, printed just above. In development a
// service that stops stops everything (`--watch` and Nuxt's dev server already reload on changes).
// Ctrl+C (SIGINT) or SIGTERM stops both: each gets SIGTERM, and this script exits only once both
// have ended (one still running after STOP_GRACE_MS is killed), so it never leaves an orphan
// holding its port.
// Before anything else it reads `<repo>/.env` (or ENV_FILE) into its environment, which both
// services inherit; a variable already set wins (envFile.mjs).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { API_NODE_FLAGS } from '../apps/api/nodeFlags.mjs';
import { backoffDelay } from '../packages/contracts/src/backoff.mjs';
import { loadEnvFile } from './envFile.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
try {
  loadEnvFile(root);
} catch (error) {
  console.error(`[start] ${error.message}`);
  process.exit(1);
}
const dev = process.argv.includes('--dev');
const apiPort = process.env.API_PORT ?? '3001';
const webPort = process.env.WEB_PORT ?? '3000';
const webOrigin = process.env.WEB_ORIGIN ?? `http://localhost:${webPort}`;

const env = {
  ...process.env,
  API_PORT: apiPort,
  WEB_ORIGIN: webOrigin,
  PORT: webPort,
  NUXT_PORT: webPort,
  NUXT_API_ORIGIN: process.env.NUXT_API_ORIGIN ?? `http://127.0.0.1:${apiPort}`,
};

const STABLE_AFTER_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;
const MAX_FAILED_RESTARTS = 10;
/** The API bounds its own shutdown at 10 s; a child still running past this is killed. */
const STOP_GRACE_MS = 15_000;

const api = {
  name: 'api',
  cwd: `${root}apps/api`,
  // Production runs the built bundle (`node build.mjs` in apps/api; `pnpm start` builds it).
  args: dev ? ['--import', 'tsx', '--watch', 'src/main.ts'] : [...API_NODE_FLAGS, 'dist/main.mjs'],
  health: `http://127.0.0.1:${apiPort}/api/health`,
};
const web = dev
  ? {
      name: 'web',
      cwd: `${root}apps/web`,
      args: [`${root}apps/web/node_modules/nuxt/bin/nuxt.mjs`, 'dev', '--port', webPort],
      health: `http://127.0.0.1:${webPort}/`,
    }
  : {
      name: 'web',
      cwd: `${root}apps/web`,
      args: ['.output/server/index.mjs'],
      health: `http://127.0.0.1:${webPort}/`,
    };

let stopping = false;
/** Each running child process, with the name of its service. */
const running = new Map();

function log(message) {
  console.error(`[start] ${message}`);
}

/** Why a child stopped, in words. */
function describeExit(code, signal) {
  if (signal === 'SIGKILL') return 'it was killed (SIGKILL: out of memory, or kill -9)';
  if (signal) return `it was stopped by ${signal}`;
  return `it exited with code ${code}`;
}

/** Resolves once `url` answers 2xx; rejects when the child exits first or after about 2 minutes. */
async function waitUntilHealthy(url, child) {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (stopping || child.exitCode !== null || child.signalCode !== null) throw new Error('exited');
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet (the first start creates the embedded database).
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no answer on ${url} after 2 minutes`);
}

/**
 * Runs `service` until the script stops; resolves once it is healthy the first time. In
 * production a later stop restarts it with backoff; a first start that fails stops everything.
 */
function supervise(service) {
  let failures = 0;
  let firstStart = true;
  return new Promise((resolveFirst) => {
    const launch = () => {
      // process.execPath is the Node that runs this script: pnpm puts the project's Node 24 first.
      const child = spawn(process.execPath, service.args, { cwd: service.cwd, env, stdio: 'inherit' });
      running.set(child, service.name);
      const startedAt = Date.now();
      let healthy = false;
      waitUntilHealthy(service.health, child).then(
        () => {
          healthy = true;
          if (firstStart) resolveFirst();
          else log(`${service.name} is back.`);
          firstStart = false;
        },
        (error) => {
          if (error.message === 'exited' || stopping) return;
          log(`${service.name} did not become ready: ${error.message}.`);
          if (firstStart) stop(1);
        },
      );
      child.on('exit', (code, signal) => {
        running.delete(child);
        if (stopping) return;
        const why = describeExit(code, signal);
        if (firstStart && !healthy) {
          log(`${service.name} could not start: ${why}. Its error is printed above; nothing was restarted.`);
          return stop(1);
        }
        if (dev) {
          log(`${service.name} stopped: ${why}. Stopping the rest.`);
          return stop(code ?? 1);
        }
        failures = Date.now() - startedAt > STABLE_AFTER_MS ? 1 : failures + 1;
        if (failures > MAX_FAILED_RESTARTS) {
          log(
            `${service.name} stopped again: ${why}. It failed ${MAX_FAILED_RESTARTS} times in a row; giving up.`,
          );
          return stop(1);
        }
        const delay = backoffDelay(failures, 1000, MAX_BACKOFF_MS);
        log(`${service.name} stopped: ${why}. Restarting it in ${delay / 1000} s (attempt ${failures}).`);
        setTimeout(() => {
          if (!stopping) launch();
        }, delay);
      });
    };
    launch();
  });
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  const children = [...running.keys()];
  for (const child of children) child.kill('SIGTERM');
  const kill = setTimeout(() => {
    for (const [child, name] of running) {
      log(`${name} did not stop within ${STOP_GRACE_MS / 1000} s of SIGTERM; killing it.`);
      child.kill('SIGKILL');
    }
  }, STOP_GRACE_MS);
  Promise.all(children.map(ended)).then(() => {
    clearTimeout(kill);
    process.exit(code);
  });
}

/** Resolves once `child` has ended (at once if it already has). */
function ended(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', resolve));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

// The web app proxies to the API: start it once the API answers, so the first page load works.
await supervise(api);
if (!stopping) {
  await supervise(web);
  if (!stopping) log(`ready: http://localhost:${webPort}  (API: http://127.0.0.1:${apiPort})`);
}
