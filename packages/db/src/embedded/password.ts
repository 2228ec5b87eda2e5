import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import postgres from 'postgres';

/**
 * The superuser password data directories made before the password was generated. A server still
 * using it is moved to the generated one on its next start.
 */
export const LEGACY_PASSWORD = 'postgres';

/** A random password, safe in a URL and in a SQL literal. */
export function generatePassword(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * The superuser password kept in `file` (mode 0600), generated on first use like the auth secret,
 * so no other local user can guess it and read every chat through the loopback port.
 */
export function passwordFromFile(file: string): string {
  if (existsSync(file)) {
    const password = readFileSync(file, 'utf8').trim();
    if (password === '') throw new Error(`the embedded PostgreSQL password file ${file} is empty`);
    return password;
  }
  mkdirSync(dirname(file), { recursive: true });
  const password = generatePassword();
  writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

type LoginResult = 'ok' | 'wrong_password';

async function tryLogin(port: number, user: string, password: string): Promise<LoginResult> {
  const sql = postgres({
    host: '127.0.0.1',
    port,
    user,
    password,
    database: 'postgres',
    max: 1,
    connect_timeout: 10,
    onnotice: () => {},
  });
  try {
    await sql`select 1`;
    return 'ok';
  } catch (error) {
    // 28P01 invalid_password; 28000 invalid_authorization_specification.
    const code = (error as { code?: string }).code;
    if (code === '28P01' || code === '28000') return 'wrong_password';
    throw new Error(`could not connect to the embedded PostgreSQL on port ${port}: ${String(error)}`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * Makes sure the running server accepts `password`. A data directory created with the old fixed
 * password gets the new one set (the file is written before, so a crash in between only repeats
 * this step on the next start).
 */
export async function ensurePassword(options: {
  port: number;
  user: string;
  password: string;
  passwordFile: string;
  log: (message: string) => void;
}): Promise<void> {
  const { port, user, password, passwordFile } = options;
  if ((await tryLogin(port, user, password)) === 'ok') return;
  if ((await tryLogin(port, user, LEGACY_PASSWORD)) === 'wrong_password')
    throw new Error(
      `the embedded PostgreSQL refused the password in ${passwordFile}. The file does not belong to ` +
        'this data directory: restore the right file, or move the data directory away to start afresh.',
    );
  const sql = postgres({
    host: '127.0.0.1',
    port,
    user,
    password: LEGACY_PASSWORD,
    max: 1,
    onnotice: () => {},
  });
  try {
    await sql.unsafe(`alter user "${user}" with password '${password.replaceAll("'", "''")}'`);
  } finally {
    await sql.end({ timeout: 1 });
  }
  options.log(`replaced the old fixed superuser password with the one generated into ${passwordFile}`);
}

/** Connection lines of pg_hba.conf whose method sends or checks the password weakly. */
const WEAK_METHOD_LINE =
  /^(\s*(?:local|host|hostssl|hostnossl|hostgssenc|hostnogssenc)\s.*?\s)(password|md5)(\s|$)/gm;

/**
 * Makes the server check passwords with `scram-sha-256`. Data directories used to be created with
 * `password` (the password crosses the loopback connection in clear text, readable by anyone who
 * can watch it); new ones are created with scram-sha-256 (`server.ts`). An older directory is moved
 * on its next start: the superuser's stored password is made a SCRAM secret first (an md5 one
 * could not be checked by scram-sha-256), then pg_hba.conf's methods are replaced and the server
 * reloads it.
 */
export async function ensureScramAuthentication(options: {
  port: number;
  user: string;
  password: string;
  dataDir: string;
  log: (message: string) => void;
}): Promise<void> {
  const hbaFile = join(options.dataDir, 'pg_hba.conf');
  const hba = readFileSync(hbaFile, 'utf8');
  const scram = hba.replace(WEAK_METHOD_LINE, '$1scram-sha-256$3');
  if (scram === hba) return;
  const sql = postgres({
    host: '127.0.0.1',
    port: options.port,
    user: options.user,
    password: options.password,
    database: 'postgres',
    max: 1,
    onnotice: () => {},
  });
  try {
    const [row] = await sql<{ scram: boolean }[]>`
      select rolpassword like 'SCRAM-SHA-256$%' as scram from pg_authid where rolname = ${options.user}`;
    if (!row?.scram) {
      await sql`set password_encryption = 'scram-sha-256'`;
      await sql.unsafe(
        `alter user "${options.user}" with password '${options.password.replaceAll("'", "''")}'`,
      );
    }
    writeFileSync(hbaFile, scram);
    await sql`select pg_reload_conf()`;
  } finally {
    await sql.end({ timeout: 1 });
  }
  options.log(`the embedded PostgreSQL now checks passwords with scram-sha-256 (was clear text; ${hbaFile})`);
}
