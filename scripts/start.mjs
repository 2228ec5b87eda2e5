#!/usr/bin/env node
// Starts the API and the web app together; stops both when either exits or on Ctrl+C.
//   node scripts/start.mjs         production: the built web app (run `pnpm build` first; `pnpm start` does)
//   node scripts/start.mjs --dev   development: API with reload, Nuxt dev server
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
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

const services = [
  {
    name: 'api',
    cwd: `${root}apps/api`,
    args: dev ? ['--import', 'tsx', '--watch', 'src/main.ts'] : ['--import', 'tsx', 'src/main.ts'],
  },
  dev
    ? {
        name: 'web',
        cwd: `${root}apps/web`,
        args: [`${root}apps/web/node_modules/nuxt/bin/nuxt.mjs`, 'dev', '--port', webPort],
      }
    : { name: 'web', cwd: `${root}apps/web`, args: ['.output/server/index.mjs'] },
];

const children = [];
let stopping = false;
function launch(service) {
  // process.execPath is the Node that runs this script: pnpm puts the project's Node 24 first.
  const child = spawn(process.execPath, service.args, { cwd: service.cwd, env, stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${service.name} exited (${signal ?? code}); stopping the rest.`);
      stop(code ?? 1);
    }
  });
  children.push(child);
}

/** The web app proxies to the API: start it once the API answers, so the first page load works. */
async function waitForApi() {
  const health = `http://127.0.0.1:${apiPort}/api/health`;
  for (let attempt = 0; attempt < 600 && !stopping; attempt += 1) {
    try {
      if ((await fetch(health)).ok) return;
    } catch {
      // Not listening yet (the first start creates the embedded database).
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the API did not answer on ${health}`);
}

const [api, web] = services;
launch(api);
waitForApi()
  .then(() => {
    if (stopping) return;
    launch(web);
    console.log(`[start] ready: http://localhost:${webPort}  (API: http://127.0.0.1:${apiPort})`);
  })
  .catch((error) => {
    console.error(`[start] ${error.message}`);
    stop(1);
  });

function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 5000).unref();
  Promise.all(
    children.map((child) => (child.exitCode === null ? new Promise((r) => child.once('exit', r)) : null)),
  ).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
