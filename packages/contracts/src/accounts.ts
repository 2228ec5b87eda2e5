import { z } from 'zod';

/** Password length rule: better-auth's config, the API's body check and the web form use these. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

const email = z.string().trim().max(254).pipe(z.email('Enter a valid email address'));

const newPassword = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `Use at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`);

/** A person's display name, as better-auth keeps it on the user. */
export const MAX_NAME_LENGTH = 100;
/** A profile image is a link to one, never the bytes: http(s) only, this long at most. */
export const MAX_IMAGE_URL_LENGTH = 2048;

const name = z.string().trim().max(MAX_NAME_LENGTH, `Use at most ${MAX_NAME_LENGTH} characters`);
/** An http(s) URL (a `javascript:` or `data:` one could run or carry anything), or none. */
const image = z
  .string()
  .max(MAX_IMAGE_URL_LENGTH, `Use at most ${MAX_IMAGE_URL_LENGTH} characters`)
  .pipe(z.url({ protocol: /^https?$/, error: 'Use an http(s) address' }))
  .nullable();

/** `POST /api/auth/sign-up/email`. Other better-auth fields (callbackURL) pass through. */
export const signUpBody = z.looseObject({
  email,
  password: newPassword,
  name: name.optional(),
  image: image.optional(),
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

/** `POST /api/auth/update-user`: a signed-in person's name and image. */
export const updateUserBody = z.looseObject({ name: name.optional(), image: image.optional() });

/**
 * `POST /api/auth/change-password` (better-auth's): the current password, and the new one under
 * the sign-up rule. `revokeOtherSessions: true` also signs out every other device.
 */
export const changePasswordBody = z.looseObject({
  currentPassword: z
    .string()
    .min(1, 'Enter your password')
    .max(PASSWORD_MAX_LENGTH * 8),
  newPassword,
  revokeOtherSessions: z.boolean().optional(),
});

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

/**
 * What this server allows before anyone signs in (`GET /api/server-settings`, no session needed):
 * the sign-in and sign-up pages and the account menu offer only what it takes.
 */
export interface ServerSettings {
  /** `AUTH_ALLOW_GUESTS`: a visitor may chat as a guest. */
  guestsAllowed: boolean;
  /** `AUTH_ALLOW_SIGNUP`: a visitor (or a guest) may create an account. */
  signUpAllowed: boolean;
}
