import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const webRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const repoRoot = path.resolve(webRoot, '../..');

/** A free TCP port on 127.0.0.1, chosen by the OS. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject()));
    });
  });
}

async function waitForOk(url: string, child: ChildProcess, what: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${what} did not answer on ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * An API (with its own embedded PostgreSQL) and a web app in front of it, as separate processes
 * this test may kill, apart from the servers every other test shares.
 */
export class OwnServers {
  private api?: ChildProcess;
  private web?: ChildProcess;

  private constructor(
    readonly apiPort: number,
    readonly webPort: number,
    readonly dataDir: string,
    /** More of the API's environment (its settings under test). */
    private readonly apiEnv: Record<string, string>,
  ) {}

  get webOrigin(): string {
    return `http://127.0.0.1:${this.webPort}`;
  }

  static async start(apiEnv: Record<string, string> = {}): Promise<OwnServers> {
    const [apiPort, webPort] = [await freePort(), await freePort()];
    const dataDir = path.join(repoRoot, '.data', `e2e-own-${apiPort}-${Date.now()}`);
    const servers = new OwnServers(apiPort, webPort, dataDir, apiEnv);
    await servers.startApi();
    servers.web = spawn(process.execPath, ['.output/server/index.mjs'], {
      cwd: webRoot,
      env: {
        ...process.env,
        PORT: String(webPort),
        HOST: '127.0.0.1',
        NUXT_API_ORIGIN: `http://127.0.0.1:${apiPort}`,
      },
      stdio: 'ignore',
    });
    await waitForOk(servers.webOrigin, servers.web, 'the web app');
    return servers;
  }

  /** Starts the API (again) on the same data directory. */
  async startApi(): Promise<void> {
    this.api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: path.join(repoRoot, 'apps/api'),
      env: {
        ...process.env,
        DATA_DIR: this.dataDir,
        API_PORT: String(this.apiPort),
        API_HOST: '127.0.0.1',
        WEB_ORIGIN: this.webOrigin,
        LOCAL_MODEL_DELAY_MS: '30',
        LOG_LEVEL: 'warn',
        // A fresh install as on a machine without Ollama, even where one runs (a test gives its own).
        OLLAMA_BASE_URL: 'off',
        // As the suite's own API: no refusal of a send beside others on a busy machine.
        SEND_LOOP_DELAY_BESIDE_SENDS_MS: '0',
        ...this.apiEnv,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitForOk(`http://127.0.0.1:${this.apiPort}/api/health`, this.api, 'the API');
  }

  /** SIGKILL: the API dies mid-whatever (its embedded PostgreSQL keeps running). */
  async killApi(): Promise<void> {
    this.api?.kill('SIGKILL');
    if (this.api) await exited(this.api);
  }

  async stop(): Promise<void> {
    for (const child of [this.web, this.api]) {
      if (!child) continue;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited(child);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
