import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, startTestServer, type TestDatabase } from '../../src/testing';

/**
 * A database of this test file's own on the test server, created before its tests and dropped
 * after them. Read `current()` inside a test or hook (it is set once `beforeAll` ran).
 */
export function useFileDatabase(): { current(): TestDatabase } {
  let server: { adminUrl: string; stop(): Promise<void> } | undefined;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    server = await startTestServer();
    database = await createTestDatabase(server.adminUrl);
  });
  afterAll(async () => {
    await database?.drop();
    await server?.stop();
  });
  return {
    current() {
      if (!database) throw new Error('the file database is read before its beforeAll ran');
      return database;
    },
  };
}
