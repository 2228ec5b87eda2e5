import { type Database, schema } from '@chat/db';
import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { anonymous } from 'better-auth/plugins';
import type { Logger } from '../platform/logger';

export interface AuthOptions {
  db: Database;
  secret: string;
  /** The origin people use (the web app); cookies are for it. */
  webOrigin: string;
  /** Origins whose pages may sign in (`trustedOrigins` in platform/config.ts). */
  trustedOrigins: string[];
  logger: Logger;
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
    emailAndPassword: { enabled: true },
    plugins: [anonymous()],
    telemetry: { enabled: false },
    // Into the API's own log, through its error serializer. better-auth's message can quote a failed
    // query with its parameters: only its first words (before a colon) are kept.
    logger: {
      log: (level, message, ...args) => {
        const err = args.find((arg) => arg instanceof Error);
        options.logger[level]({ err, source: 'better-auth' }, message.split(':')[0] ?? '');
      },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;

/** The signed-in user's id, or null. */
export async function userIdOf(auth: Auth, headers: Headers): Promise<string | null> {
  const session = await auth.api.getSession({ headers });
  return session?.user.id ?? null;
}
