import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    // Each file gets its own database (test/support/testApi.ts), so files run in parallel.
    pool: 'forks',
    // Vitest's default is one worker less than the cores: one on a 2-core machine, so the files ran
    // one after another. They mostly wait (replies paced by the local model's delays, database
    // outages, leases running out), so three at a time fill the wait, not the cores.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { MASTRA_TELEMETRY_DISABLED: '1' },
  },
});
