import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each test starts real PostgreSQL servers in directories of its own.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
