import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 240_000,
    // Each file starts a benchmark's servers: one at a time, or they share two cores and ports.
    fileParallelism: false,
    env: { MASTRA_TELEMETRY_DISABLED: '1' },
  },
});
