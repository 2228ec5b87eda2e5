import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, SESSION_REFRESH_SECONDS } from '@chat/contracts';
import { type Database, schema } from '@chat/db';
import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { anonymous } from 'better-auth/plugins';
import type { Logger } from '../platform/logger';
import { cookieValue, type SessionCache } from './sessionCache';
import type { SignedIn } from './signedIn';

export interface AuthOptions {
  db: Database;
  secret: string;
  /** The origin people use (the web app); cookies are for it. */
  webOrigin: string;
  /** Origins whose pages may sign in (`trustedOrigins` in platform/config.ts). */
  trustedOrigins: string[];
  logger: Logger;
  /**
   * Moves everything a guest made to the account it signs up as or signs in to, before
   * better-auth deletes the guest user. Runs on every link; must be idempotent.
   */
  onGuestLinked: (link: { guestId: string; userId: string }) => Promise<void>;
  /** Each error better-auth reports (a database error opens the circuit, `platform/databaseCircuit.ts`). */
  onError?: (error: unknown) => void;
}

/** Accounts: a guest account on first visit (anonymous sign-in), optional email + password. */
export function createAuth(options: AuthOptions) {
  return betterAuth({
    basePath: '/api/auth',
    baseURL: options.webOrigin,
    secret: options.secret,
    trustedOrigins: options.trustedOrigins,
    database: drizzleAdapter(options.db, {
      provider: 'pg',
      schema: {
        user: schema.user,
        session: schema.session,
        account: schema.account,
        verification: schema.verification,
      },
    }),
    emailAndPassword: {
      enabled: true,
      minPasswordLength: PASSWORD_MIN_LENGTH,
      maxPasswordLength: PASSWORD_MAX_LENGTH,
    },
    // A session's updated_at is its "last seen": refreshed at most this often while it is used.
    session: { updateAge: SESSION_REFRESH_SECONDS },
    plugins: [
      anonymous({
        onLinkAccount: ({ anonymousUser, newUser }) =>
          options.onGuestLinked({ guestId: anonymousUser.user.id, userId: newUser.user.id }),
      }),
    ],
    telemetry: { enabled: false },
    // An error that is not one of better-auth's own refusals leaves its handler (instead of being
    // printed to stderr with the query's parameters, then answered with an empty 500): the app's
    // error handler answers it (`503 unavailable` for a database error) and logs it redacted.
    onAPIError: { throw: true },
    // Into the API's own log, through its error serializer. better-auth's message can quote a failed
    // query with its parameters: only its first words (before a colon) are kept.
    logger: {
      log: (level, message, ...args) => {
        const err = args.find((arg) => arg instanceof Error);
        if (err) options.onError?.(err);
        options.logger[level]({ err, source: 'better-auth' }, message.split(':')[0] ?? '');
      },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;

/**
 * Who sent the request, or null. With guests switched off (`AUTH_ALLOW_GUESTS=false`) a guest
 * session left from before counts as none: it may only sign up or sign in, which keeps its chats.
 * With a `cache`, a session looked up a moment ago answers without better-auth (sessionCache.ts).
 */
export async function signedInOf(
  auth: Auth,
  headers: Headers,
  options: { allowGuests: boolean; cache?: SessionCache },
): Promise<SignedIn | null> {
  const { cache } = options;
  const cookie = cache
    ? cookieValue(headers.get('cookie'), (await auth.$context).authCookies.sessionToken.name)
    : undefined;
  let signedIn = cookie ? (cache?.get(cookie) ?? null) : null;
  if (!signedIn) {
    const session = await auth.api.getSession({ headers });
    if (!session) return null;
    signedIn = {
      userId: session.user.id,
      sessionId: session.session.id,
      isGuest: session.user.isAnonymous === true,
    };
    if (cookie) cache?.set(cookie, signedIn, session.session.expiresAt);
  }
  if (signedIn.isGuest && !options.allowGuests) return null;
  return signedIn;
}
