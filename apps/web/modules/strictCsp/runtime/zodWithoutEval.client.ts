import { z } from 'zod';

/**
 * zod compiles object parsers with `new Function` when it may; its first parse probes for that,
 * and under a CSP without 'unsafe-eval' the probe shows up as a policy violation. Turning the
 * compiler off makes zod parse without ever trying.
 */
export default defineNuxtPlugin({
  name: 'zod-without-eval',
  setup() {
    z.config({ jitless: true });
  },
});
