import { defineConfig } from 'vitest/config';

// Measurements, not tests: `pnpm --filter @chat/api probe`. They print figures and are not part of
// the test command (test/probes/*.probe.ts), so nothing in `pnpm test` is skipped for them. One
// at a time: they time things.
export default defineConfig({
  test: {
    include: ['test/probes/**/*.probe.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 60_000,
    env: { MASTRA_TELEMETRY_DISABLED: '1' },
  },
});
