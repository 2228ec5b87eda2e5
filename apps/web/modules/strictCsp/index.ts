import { addPlugin, createResolver, defineNuxtModule } from 'nuxt/kit';

/**
 * Browser-side half of the Content-Security-Policy (the headers are set by the server plugin in
 * server/plugins/securityHeaders.ts): keeps the client bundle from ever needing `eval`.
 */
export default defineNuxtModule({
  meta: { name: 'strict-csp' },
  setup() {
    const { resolve } = createResolver(import.meta.url);
    addPlugin({ src: resolve('./runtime/zodWithoutEval.client'), order: -50 });
  },
});
