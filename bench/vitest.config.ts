import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 180_000,
    env: { MASTRA_TELEMETRY_DISABLED: '1' },
  },
});
