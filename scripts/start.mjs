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

const children = services.map((service) => {
  // process.execPath is the Node that runs this script: pnpm puts the project's Node 24 first.
  const child = spawn(process.execPath, service.args, { cwd: service.cwd, env, stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${service.name} exited (${signal ?? code}); stopping the rest.`);
      stop(code ?? 1);
    }
  });
  return child;
});

console.log(`[start] web: http://localhost:${webPort}  api: http://127.0.0.1:${apiPort}`);

let stopping = false;
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
