import { anonymousClient } from 'better-auth/client/plugins';
import { createAuthClient } from 'better-auth/vue';

/**
 * The better-auth client for the API's /api/auth/* routes (same origin, through the proxy),
 * provided as `$auth` (the session middleware makes sure of a session before any page asks the API
 * for data, so every later request carries the session cookie).
 */
export default defineNuxtPlugin({
  name: 'auth',
  async setup() {
    const auth = createAuthClient({
      baseURL: window.location.origin,
      basePath: '/api/auth',
      plugins: [anonymousClient()],
    });
    return { provide: { auth } };
  },
});
