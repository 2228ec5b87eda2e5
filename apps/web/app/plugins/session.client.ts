/** Signs a first-time visitor in as a guest before the first page renders. */
export default defineNuxtPlugin({
  name: 'session',
  dependsOn: ['auth'],
  async setup() {
    await useSession().ensureSession();
  },
});
