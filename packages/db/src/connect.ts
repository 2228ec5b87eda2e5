import { join } from 'node:path';
import postgres from 'postgres';
import { createDatabase, createHangWatch, createSql, type Database, type Sql } from './client';
import { startEmbeddedPostgres } from './embedded';
import type { HangWatch } from './hangWatch';
import { runMigrations } from './migrate';

export interface DatabaseHandle {
  /** Connection URL (also given to Mastra's store). */
  url: string;
  sql: Sql;
  db: Database;
  /** True when this process started an embedded server. */
  embedded: boolean;
  /** The client-side deadline `sql` keeps; another pool serving requests makes its connections through it too. */
  watch: HangWatch;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /**
   * Use this server; when absent an embedded PostgreSQL is started under `dataDir/postgres`, its
   * superuser password generated once into `dataDir/postgres-password`.
   */
  databaseUrl?: string;
  dataDir: string;
  embeddedPort?: number;
  onLog?: (message: string) => void;
  /** Told when the database hung and the connections waiting on it were cut. */
  onHang?: (dropped: number) => void;
}

const EMBEDDED_DATABASE = 'chat';

/** Connects to `DATABASE_URL` or an embedded server, and brings the schema up to date. */
export async function connect(options: ConnectOptions): Promise<DatabaseHandle> {
  let url = options.databaseUrl;
  let stopServer = async () => {};
  if (!url) {
    const server = await startEmbeddedPostgres({
      dataDir: join(options.dataDir, 'postgres'),
      port: options.embeddedPort,
      passwordFile: join(options.dataDir, 'postgres-password'),
      onLog: options.onLog,
    });
    stopServer = server.stop;
    url = await ensureDatabase(server.adminUrl, EMBEDDED_DATABASE);
  }
  await runMigrations(url);
  const watch = createHangWatch(url, options.onHang);
  const sql = createSql(url, { watch });
  return {
    url,
    sql,
    db: createDatabase(sql),
    embedded: !options.databaseUrl,
    watch,
    close: async () => {
      await watch.close();
      await sql.end({ timeout: 5 });
      await stopServer();
    },
  };
}

/** Creates `name` on the server of `adminUrl` when missing; returns its URL. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
