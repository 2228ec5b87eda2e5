import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';

/**
 * End-to-end tests against the production build (`.output`) and the real API with the local
 * deterministic model. Both servers start fresh; the API gets a data directory of its own per
 * run. Chromium is Debian's (/usr/bin/chromium, or CHROMIUM_PATH): `playwright install` cannot
 * reach its CDN. `scripts/check-browser.mjs` checks for it before the root test commands start.
 */
const webRoot = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(webRoot, '../..');

/** A port from the environment, or the default. */
function port(name: string, fallback: number): number {
  const value = process.env[name];
  if (!value) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 65535)
    throw new Error(`${name} must be a port, got ${value}`);
  return parsed;
}

// Configurable so two runs (say, CI and a developer's) can share a machine.
const WEB_PORT = port('E2E_WEB_PORT', 3100);
const API_PORT = port('E2E_API_PORT', 3101);
const apiOrigin = `http://127.0.0.1:${API_PORT}`;
const webOrigin = `http://127.0.0.1:${WEB_PORT}`;

// This file is loaded by the runner and again by every worker: name the run once, in the
// runner, and let the workers inherit it through the environment.
process.env.E2E_RUN_ID ??= `${Date.now()}`;
const dataRoot = path.join(repoRoot, '.data');
// The API port is in the name too: two runs started in the same millisecond still get their own.
const dataDir = path.join(dataRoot, `e2e-${API_PORT}-${process.env.E2E_RUN_ID}`);

if (!process.env.TEST_WORKER_INDEX) {
  rmSync(dataDir, { recursive: true, force: true });
  removeOldRunData();
}

/** Data of earlier runs (an embedded Postgres each) is of no use: keep the last hour's only. */
function removeOldRunData(): void {
  let entries: string[] = [];
  try {
    entries = readdirSync(dataRoot).filter((name) => name.startsWith('e2e-'));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = path.join(dataRoot, name);
    if (Date.now() - statSync(dir).mtimeMs > 60 * 60 * 1000) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * T3: the API gets the test MCP server (stdio, under this Node, which strips its types) and one
 * that cannot start, so the tools panel shows an MCP server's tools and an unavailable server.
 */
const mcpServers = JSON.stringify([
  {
    name: 'fixture',
    command: process.execPath,
    args: [path.join(repoRoot, 'apps/api/test/fixtures/mcp/testServer.ts')],
  },
  { name: 'broken', command: path.join(repoRoot, '.data/no-such-mcp-server') },
]);

// E2E_REUSE_SERVERS=1 runs against servers already listening on those ports (while debugging).
const reuseExistingServer = process.env.E2E_REUSE_SERVERS === '1';

export default defineConfig({
  testDir: './e2e',
  outputDir: './test-results',
  // Room for a host that runs everything twice as slowly as usual (a busy CI machine): each step
  // is bounded by `expect`'s timeout, the whole test by this.
  timeout: 120_000,
  expect: { timeout: 10_000 },
  fullyParallel: true,
  // Two cores: the API, the web server and the browsers share them.
  workers: 2,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list'], ['html', { open: 'never', outputFolder: './playwright-report' }]],
  use: {
    baseURL: webOrigin,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: [
    {
      command: 'npx -y pnpm@12.4.2 --filter @chat/api start',
      cwd: repoRoot,
      url: `${apiOrigin}/api/health`,
      env: {
        DATA_DIR: dataDir,
        API_PORT: String(API_PORT),
        WEB_ORIGIN: webOrigin,
        LOCAL_MODEL_DELAY_MS: '30',
        // One API process: several are covered by the API suite (processes.test.ts).
        API_PROCESSES: '1',
        // Warnings and errors only: at info the API writes a line per request (its access log).
        LOG_LEVEL: 'warn',
        // No refusal of a send beside others for a loop a little behind: the suite runs on a busy
        // machine, where that is the machine's doing (the API suite's overload tests cover it).
        SEND_LOOP_DELAY_BESIDE_SENDS_MS: '0',
        // Models (M1), all the built-in one under other names, so the model picker and
        // Regenerate's menu show; the default keeps the id `local` (labelled as the demo model).
        // One has a long name, as configured models often do: the composer must still fit a phone.
        // One has a small window, so documents are cut to it and the composer warns (D1).
        CHAT_MODELS:
          'local,local;id=local-b;label=Local B,local;id=local-long;label=Built-in with a long name (8k window),local;id=local-small;label=Small window;window=2000',
        MCP_SERVERS: mcpServers,
        // Every test signs a new guest in, and all come from one address: no per-IP or
        // per-account limits in the browser suite (the API suite tests them).
        RATE_LIMIT_GUESTS_PER_IP: '0',
        RATE_LIMIT_SIGN_INS_PER_IP: '0',
        RATE_LIMIT_FAILED_SIGN_INS: '0',
        RATE_LIMIT_FAILED_SIGN_INS_PER_EMAIL: '0',
        RATE_LIMIT_THREADS_PER_ACCOUNT: '0',
        RATE_LIMIT_SENDS_PER_ACCOUNT: '0',
        RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '0',
      },
      reuseExistingServer,
      timeout: 180_000,
      stdout: 'pipe',
      stderr: 'pipe',
    },
    {
      command: 'node .output/server/index.mjs',
      cwd: webRoot,
      url: webOrigin,
      env: {
        PORT: String(WEB_PORT),
        HOST: '127.0.0.1',
        NUXT_API_ORIGIN: apiOrigin,
      },
      reuseExistingServer,
      timeout: 60_000,
      stdout: 'pipe',
      stderr: 'pipe',
    },
  ],
});
