/**
 * Before any page: make sure of a session. A first-time visitor becomes a guest; when the server
 * has guests switched off, a visitor without an account is sent to the sign-in page. The sign-in
 * and sign-up pages only read the session (no guest is made for them).
 */
export default defineNuxtRouteMiddleware(async (to) => {
  const session = useSession();
  if (session.account.value) return;
  if (AUTH_PAGES.includes(to.path)) {
    if (!session.checked.value) await session.ensureSession({ startGuest: false });
    return;
  }
  await session.ensureSession({ startGuest: true });
  if (!session.account.value && !session.guestsAllowed.value) {
    return navigateTo({ path: '/sign-in', query: to.fullPath === '/' ? {} : { redirect: to.fullPath } });
  }
});
