import { z } from 'zod';

/** Password length rule: better-auth's config, the API's body check and the web form use these. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

const email = z.string().trim().max(254).pipe(z.email('Enter a valid email address'));

/** `POST /api/auth/sign-up/email`. Other better-auth fields (name, callbackURL) pass through. */
export const signUpBody = z.looseObject({
  email,
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, `Use at least ${PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`),
});
export type SignUpBody = z.infer<typeof signUpBody>;

/** `POST /api/auth/sign-in/email`: any non-empty password may be tried. */
export const signInBody = z.looseObject({
  email,
  password: z
    .string()
    .min(1, 'Enter your password')
    .max(PASSWORD_MAX_LENGTH * 8),
});
export type SignInBody = z.infer<typeof signInBody>;

/** `GET /api/account`: who is signed in. */
export interface Account {
  id: string;
  /** Null for a guest. */
  email: string | null;
  isGuest: boolean;
  createdAt: string;
}

/** One signed-in device (`GET /api/account/sessions`). */
export interface AccountSession {
  id: string;
  /** Read from the user agent, e.g. "Chrome on Linux"; "Unknown device" when there is none. */
  device: string;
  createdAt: string;
  /** When the session was last refreshed (to within `SESSION_REFRESH_SECONDS`). */
  lastSeenAt: string;
  /** The session of this request. */
  current: boolean;
}

/** How often an active session's "last seen" moves on (better-auth's `session.updateAge`). */
export const SESSION_REFRESH_SECONDS = 5 * 60;

/** `DELETE /api/account`'s answer: everything is gone when it arrives. */
export interface AccountDeleted {
  deleted: true;
  threads: number;
}
