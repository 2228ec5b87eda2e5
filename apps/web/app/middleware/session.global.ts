/**
 * Signs a first-time visitor in as a guest before a page that needs a session renders. Pages
 * that anyone may open without an account (a shared snapshot) say `sessionless: true` in their
 * page meta and never create one.
 */
export default defineNuxtRouteMiddleware(async (to) => {
  if (to.meta.sessionless) return;
  const session = useSession();
  if (session.user.value) return;
  await session.ensureSession();
});
