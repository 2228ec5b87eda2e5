import { defineConfig } from 'vitest/config';

/** Unit tests of the web app's pure parts (the chat page's state model): no browser, no Nuxt. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
  },
});
