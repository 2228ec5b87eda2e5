import { anonymousClient } from 'better-auth/client/plugins';
import { createAuthClient } from 'better-auth/vue';

/**
 * The better-auth client for the API's /api/auth/* routes (same origin, through the proxy),
 * provided as `$auth`; then the guest session is made sure of before any page asks the API
 * for data, so every later request carries the session cookie.
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
