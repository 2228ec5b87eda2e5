import type { H3 } from 'h3';
import { authedRoutes, publicRoutes } from './route';
import type { ApiServices } from './services';

/** The signed-in person's account: who, their sessions, and deleting it all; what a visitor may do. */
export function registerAccountRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const { accounts } = services;

  // Before any session: the sign-in page needs to know whether to offer sign-up.
  publicRoutes(app)('get', '/api/server-settings', () => accounts.serverSettings());

  route('get', '/api/account', (_event, _userId, signedIn) => accounts.account(signedIn));

  route('get', '/api/account/sessions', (event, _userId, signedIn) =>
    accounts.sessions(event.req.headers, signedIn),
  );

  route('post', '/api/account/sessions/revoke-others', async (event, _userId, signedIn) => {
    await accounts.revokeOtherSessions(event.req.headers, signedIn);
    return accounts.sessions(event.req.headers, signedIn);
  });

  route('delete', '/api/account', async (event, userId) => {
    const deleted = await accounts.deleteAccount(userId);
    // The session row went with the user; these headers clear the browser's cookie.
    const headers = await accounts.signOutHeaders(event.req.headers);
    headers.set('content-type', 'application/json');
    return new Response(JSON.stringify(deleted), { status: 200, headers });
  });
}
