import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '@chat/db';
import postgres from 'postgres';
import { childrenOf } from './processes';

/** A database the harness created for this run, and drops at the end. */
export interface BenchDatabase {
  url: string;
  /** Where the server lives: an external server's host, or "embedded". */
  server: string;
  /** Only for the embedded server the harness started (it owns its processes). */
  freezer?: DatabaseFreezer;
  drop(): Promise<void>;
}

/**
 * Stops the whole server without ending anything (SIGSTOP): a database that hangs, not one that is
 * down. Its connections stay open and the kernel still accepts new ones, but nothing answers.
 */
export interface DatabaseFreezer {
  freeze(): void;
  /** SIGCONT; does nothing when it is not frozen. */
  thaw(): void;
}

/**
 * The embedded server of `dataDir`: the postmaster first (so it starts no new session), then every
 * process it started (each session's backend, the background workers); thawed in the reverse order.
 */
function freezerOf(dataDir: string): DatabaseFreezer {
  let frozen = false;
  const postmaster = () => {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster.pid in ${dataDir}`);
    return pid;
  };
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // It ended meanwhile.
    }
  };
  return {
    freeze() {
      const pid = postmaster();
      frozen = true;
      process.kill(pid, 'SIGSTOP');
      for (const child of childrenOf(pid)) signal(child, 'SIGSTOP');
    },
    thaw() {
      if (!frozen) return;
      const pid = postmaster();
      for (const child of childrenOf(pid)) signal(child, 'SIGCONT');
      signal(pid, 'SIGCONT');
      frozen = false;
    },
  };
}

const PREFIX = 'chat_bench_';

export class ForeignDataError extends Error {}

/**
 * Refuses a database that holds anything: the harness only ever runs against a database it has
 * just created, so tables found here belong to someone else.
 */
export async function assertEmpty(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ name: string }[]>`
      select table_schema || '.' || table_name as name from information_schema.tables
      where table_schema not in ('pg_catalog', 'information_schema') limit 5`;
    if (rows.length > 0) {
      throw new ForeignDataError(
        `refusing to benchmark against a database holding data it did not create (${rows
          .map((row) => row.name)
          .join(', ')})`,
      );
    }
  } finally {
    await sql.end();
  }
}

/** Creates a new database named for this run on the server of `adminUrl`; refuses an existing one. */
async function createOwnDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${PREFIX}${randomUUID().replaceAll('-', '')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const existing = await admin`select 1 from pg_database where datname = ${name}`;
    if (existing.length > 0) throw new ForeignDataError(`database ${name} already exists`);
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await assertEmpty(url.toString());
  return {
    url: url.toString(),
    drop: async () => {
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * `BENCH_DATABASE_URL` (or `DATABASE_URL`) names a server: the harness creates its own database
 * there and drops it afterwards, never touching the named database. Without either, it starts an
 * embedded PostgreSQL in a temporary directory and removes the directory at the end.
 */
export async function openBenchDatabase(options: { port?: number } = {}): Promise<BenchDatabase> {
  const external = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL;
  if (external) {
    const admin = new URL(external);
    admin.pathname = '/postgres';
    const own = await createOwnDatabase(admin.toString());
    return { url: own.url, server: admin.host, drop: own.drop };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-bench-pg-'));
  const server = await startEmbeddedPostgres({ dataDir, port: options.port, persistent: false }).catch(
    (error: unknown) => {
      // It did not start (its port taken, say): nothing of it stays behind.
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    },
  );
  const own = await createOwnDatabase(server.adminUrl);
  return {
    url: own.url,
    server: 'embedded',
    freezer: freezerOf(dataDir),
    drop: async () => {
      try {
        await own.drop();
      } finally {
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}
