import { createDatabase, createSql, type Database, schema } from '@chat/db';
import { createTestDatabase, type TestDatabase } from '@chat/db/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, inject } from 'vitest';
import { serveHttp } from '../../src/httpServer';
import { type ChatRuntime, DEFAULT_CHAT_RUNTIME } from '../../src/platform/chatRuntimes';
import { type Config, loadConfig } from '../../src/platform/config';
import { createLogger } from '../../src/platform/logger';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime';
import { ApiClient, TEST_WEB_ORIGIN } from './client';

export interface TestApi {
  baseUrl: string;
  runtime: Runtime;
  client(): Promise<ApiClient>;
  close(): Promise<void>;
}

/** A fresh database on the run's test server. */
export async function freshDatabase(): Promise<TestDatabase> {
  return await createTestDatabase(inject('adminDatabaseUrl'));
}

/**
 * A database of the file's own holding one account, reached through the app's drizzle client with
 * no API in front: for tests of SQL alone. The callback gets the client once `beforeAll` ran.
 */
export function useOwnedDatabase(ownerId: string, ready: (db: Database) => void): void {
  let database: TestDatabase;
  let client: ReturnType<typeof createSql>;
  beforeAll(async () => {
    database = await freshDatabase();
    client = createSql(database.url, { max: 4 });
    const db = createDatabase(client);
    await db.insert(schema.user).values({ id: ownerId, name: 'owner', email: `${ownerId}@example.test` });
    ready(db);
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });
}

/**
 * The environment of a test API. Rate limits are off (tests send hundreds of requests in seconds
 * from one address); `ratelimit.test.ts` turns them on with small numbers. A send waiting for a
 * start slot is never shed (on a loaded machine 50 parallel sends would wait past the default
 * quarter second, and outnumber the default line of 32): only the line `overload.test.ts` sets up
 * sheds.
 */
export const TEST_ENV: Record<string, string> = {
  // One process per API under test (what most tests reason about); processes.test.ts runs several.
  API_PROCESSES: '1',
  WEB_ORIGIN: TEST_WEB_ORIGIN,
  LOCAL_MODEL_DELAY_MS: '5',
  BETTER_AUTH_SECRET: 'test-secret-test-secret-test-secret-0123',
  LOG_LEVEL: 'silent',
  RATE_LIMIT_GUESTS_PER_IP: '0',
  RATE_LIMIT_SIGN_INS_PER_IP: '0',
  RATE_LIMIT_FAILED_SIGN_INS: '0',
  RATE_LIMIT_FAILED_SIGN_INS_PER_EMAIL: '0',
  RATE_LIMIT_THREADS_PER_ACCOUNT: '0',
  RATE_LIMIT_SENDS_PER_ACCOUNT: '0',
  RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '0',
  SEND_WAIT_MS: '60000',
  SENDS_WAITING: '1000',
  // No refusal for a busy event loop: suites run beside each other on a busy machine, where the
  // loop falls behind for reasons of the machine's (overload.test.ts turns it on).
  SEND_LOOP_DELAY_MS: '0',
  SEND_LOOP_DELAY_BESIDE_SENDS_MS: '0',
  // Never a developer's own Ollama: models.test.ts points it at a scripted one.
  OLLAMA_BASE_URL: 'off',
  // The runtime driver of the run (`CHAT_RUNTIME=ai-sdk pnpm test` runs every suite on it).
  ...(process.env.CHAT_RUNTIME ? { CHAT_RUNTIME: process.env.CHAT_RUNTIME } : {}),
};

/** The runtime driver the run's test APIs use (`CHAT_RUNTIME`, else the configuration's default). */
export const TEST_RUNTIME = (TEST_ENV.CHAT_RUNTIME ?? DEFAULT_CHAT_RUNTIME) as ChatRuntime;

export function testConfig(databaseUrl: string, overrides: Record<string, string> = {}): Config {
  return loadConfig({ ...TEST_ENV, DATABASE_URL: databaseUrl, API_PORT: '0', ...overrides });
}

/**
 * A real API instance on a real HTTP port, against `databaseUrl`. `logTo`: where its log goes (a
 * test that reads the log), at the configured `LOG_LEVEL`.
 */
export async function startTestApi(
  databaseUrl: string,
  overrides: Record<string, string> = {},
  { logTo, ...options }: RuntimeOptions & { logTo?: Parameters<typeof createLogger>[1] } = {},
): Promise<TestApi> {
  const config = testConfig(databaseUrl, overrides);
  const runtime = await createRuntime(config, createLogger(config.LOG_LEVEL, logTo), options);
  const server = await serveHttp(runtime.services, { port: 0, hostname: '127.0.0.1' });
  const baseUrl = (server.url ?? '').replace(/\/$/, '');
  return {
    baseUrl,
    runtime,
    client: () => ApiClient.signIn(baseUrl),
    close: async () => {
      await server.close(true);
      await runtime.close();
    },
  };
}

/**
 * Gives the calling test file its own database and API instance for all its tests, with a
 * signed-in guest; `onReady` receives them before the first test.
 */
export function useTestApi(
  onReady: (started: { api: TestApi; client: ApiClient }) => void,
  overrides: Record<string, string> = {},
): void {
  let database: TestDatabase | undefined;
  let api: TestApi | undefined;
  beforeAll(async () => {
    database = await freshDatabase();
    api = await startTestApi(database.url, overrides);
    onReady({ api, client: await api.client() });
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });
}

/** A turn's row as stored (the tests that look past the API's answers at the turn itself). */
export async function turnRow(api: TestApi, turnId: string) {
  const [row] = await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.id, turnId));
  return row;
}
