import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

export interface Place {
  dataDir: string;
  passwordFile: string;
  remove(): void;
}

/** A data directory and its password file, as connect() lays them out under DATA_DIR. */
export function freshPlace(): Place {
  const root = mkdtempSync(join(tmpdir(), 'chat-db-test-'));
  // Run as root, PostgreSQL runs as the `postgres` user, which must reach the data directory.
  chmodSync(root, 0o755);
  return {
    dataDir: join(root, 'postgres'),
    passwordFile: join(root, 'postgres-password'),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface Owner {
  child: ChildProcess;
  port: number;
}

/** Starts the embedded server of `place` from another process, which then stays alive. */
export async function startOwner(place: Place): Promise<Owner> {
  const script = fileURLToPath(new URL('./ownEmbeddedServer.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, place.dataDir, place.passwordFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((candidate) => candidate.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`the owner process exited with ${code}`)));
  });
  return { child, port };
}

export async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once('exit', resolve));
}

/** Whether a process with this pid is running (a zombie counts as ended). */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Can `password` log in to the server on `port`? */
export async function canLogIn(port: number, password: string): Promise<boolean> {
  const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres', max: 1 });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}
