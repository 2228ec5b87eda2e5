import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EmbeddedServer,
  ensureDatabase,
  freePort,
  runMigrations,
  startEmbeddedPostgres,
} from '@chat/db';
import postgres from 'postgres';
import { childrenOf } from '../processTable';

/**
 * A PostgreSQL server of the calling test's own (not the run's shared one), which it can stop and
 * start again on the same port and data directory: to the API given `databaseUrl` that is a real
 * outage, its connections cut and new ones refused until the server is back.
 */
export class OwnedPostgres {
  private server: EmbeddedServer | undefined;
  private frozen = false;

  private constructor(
    private readonly root: string,
    private readonly port: number,
    /** The migrated database the API under test uses (`DATABASE_URL`). */
    readonly databaseUrl: string,
  ) {}

  static async start(): Promise<OwnedPostgres> {
    const root = mkdtempSync(join(tmpdir(), 'chat-faults-'));
    // Run as root, PostgreSQL runs as the `postgres` user, which must reach the data directory.
    chmodSync(root, 0o755);
    const port = await freePort();
    const server = await startEmbeddedPostgres({ ...placeIn(root), port });
    const databaseUrl = await ensureDatabase(server.adminUrl, 'chat');
    await runMigrations(databaseUrl);
    const owned = new OwnedPostgres(root, port, databaseUrl);
    owned.server = server;
    return owned;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** Stops the server (a fast shutdown: sessions are cut); resolves once it is down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.stop();
  }

  /** Starts it again, same port, same data. */
  async resume(): Promise<void> {
    if (this.server) return;
    this.server = await startEmbeddedPostgres({ ...placeIn(this.root), port: this.port });
  }

  /**
   * Freezes the server without ending anything (`SIGSTOP`): the postmaster first, so it starts no
   * new session, then every process it started (each session's backend, the background workers).
   * Connections stay open and new ones are accepted by the kernel, but nothing answers: a database
   * that hangs, not one that is down. `thaw` lets it go on where it stopped.
   */
  freeze(): void {
    const postmaster = this.postmasterPid();
    this.frozen = true;
    process.kill(postmaster, 'SIGSTOP');
    for (const child of childrenOf(postmaster)) signal(child, 'SIGSTOP');
  }

  /** `SIGCONT` to the postmaster and every process it started. */
  thaw(): void {
    const postmaster = this.postmasterPid();
    for (const child of childrenOf(postmaster)) signal(child, 'SIGCONT');
    process.kill(postmaster, 'SIGCONT');
    this.frozen = false;
  }

  private postmasterPid(): number {
    const pid = Number(
      readFileSync(join(placeIn(this.root).dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    if (!Number.isInteger(pid) || pid <= 0) throw new Error('no postmaster.pid');
    return pid;
  }

  /** Runs `work` with a short-lived connection of the test's own (for reading rows after recovery). */
  async query<T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres(this.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      return await work(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }

  async dispose(): Promise<void> {
    if (this.frozen) this.thaw();
    await this.stop().catch(() => {});
    rmSync(this.root, { recursive: true, force: true });
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // It ended meanwhile.
  }
}

function placeIn(root: string) {
  return { dataDir: join(root, 'postgres'), passwordFile: join(root, 'postgres-password') };
}
