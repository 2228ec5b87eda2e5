/**
 * Before any page: make sure of a session. A first-time visitor becomes a guest; when the server
 * has guests switched off, a visitor without an account is sent to the sign-in page. The sign-in
 * and sign-up pages only read the session (no guest is made for them). Pages that anyone may open
 * without an account (a shared snapshot) say `sessionless: true` in their page meta and never
 * create one.
 */
export default defineNuxtRouteMiddleware(async (to) => {
  if (to.meta.sessionless) return;
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
