/**
 * Before any page: make sure of a session. A first-time visitor becomes a guest; when the server
 * has guests switched off, a visitor without an account is sent to the sign-in page. The sign-in
 * and sign-up pages only read the session (no guest is made for them). Pages that anyone may open
 * without an account (a shared snapshot) say `sessionless: true` in their page meta and never
 * create one.
 *
 * The page does not wait for it (no blank page while the session is made): the start page needs
 * nothing from the API to be shown, and a browser that had a session sends its cookie with every
 * request anyway; what needs the account waits for it. Only a first visit straight to another
 * page (a chat's link) waits, since that page would ask the API for data before there is a
 * session to ask with.
 */
export default defineNuxtRouteMiddleware(async (to) => {
  if (to.meta.sessionless) return;
  const session = useSession();
  if (session.account.value) return;
  if (AUTH_PAGES.includes(to.path)) {
    if (!session.checked.value) await session.ensureSession({ startGuest: false });
    return;
  }
  const ready = (async () => {
    await session.ensureSession({ startGuest: true });
    if (session.account.value || session.guestsAllowed.value) return;
    return navigateTo({ path: '/sign-in', query: to.fullPath === '/' ? {} : { redirect: to.fullPath } });
  })();
  if (to.path === '/' || session.likelySignedIn()) return;
  return await ready;
});
