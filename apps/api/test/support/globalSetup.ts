import { startTestServer } from '@chat/db/testing';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}

/** One PostgreSQL server for the whole run: DATABASE_URL's, or an embedded one. */
export default async function setup(project: TestProject) {
  const server = await startTestServer();
  project.provide('adminDatabaseUrl', server.adminUrl);
  return async () => {
    await server.stop();
  };
}
