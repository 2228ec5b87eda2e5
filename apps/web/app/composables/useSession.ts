import type { Account } from '@chat/contracts';

/** Pages that work without a session: a guest is not made for them. */
export const AUTH_PAGES = ['/sign-in', '/sign-up'];

/** Kept in this browser while it has a session: the next visit need not wait to find out. */
const SIGNED_IN_HINT = 'chat:signed-in';

function readHint(): boolean {
  try {
    return localStorage.getItem(SIGNED_IN_HINT) === '1';
  } catch {
    return false;
  }
}

function writeHint(signedIn: boolean): void {
  try {
    if (signedIn) localStorage.setItem(SIGNED_IN_HINT, '1');
    else localStorage.removeItem(SIGNED_IN_HINT);
  } catch {
    // Storage off: every visit finds out first, as a first visit does.
  }
}

/**
 * The caller's account. First visit: no session, so sign in as a guest (anonymous plugin);
 * when the server has guests switched off (`403 guests_disabled`), there is no account until the
 * person signs in, and the route guard sends them to the sign-in page. Failures are kept in
 * `error` for the layout to show rather than thrown, so the shell still renders. The `session`
 * route middleware starts `ensureSession` before the first page; pages render meanwhile, and
 * what needs the account waits for it (`whenSignedIn`). When the API cannot be reached, the
 * session is tried again with backoff until it answers, so the page recovers by itself (the
 * layout says it is reconnecting meanwhile).
 *
 * No request is made that is known to fail: the session is read first (better-auth answers
 * `null` without one) and the account only when there is a session, so a first visit logs no
 * 401. A browser that had a session (`likelySignedIn`) reads both at once, and its pages ask the
 * API for their data without waiting: the cookie is already there.
 */
export function useSession() {
  const { $auth } = useNuxtApp();
  const account = useState<Account | null>('session-account', () => null);
  const guestsAllowed = useState<boolean>('session-guests-allowed', () => true);
  const error = useState<string | null>('session-error', () => null);
  /** The session was read at least once (so an auth page need not read it again). */
  const checked = useState<boolean>('session-checked', () => false);
  /** The check (and a guest's sign-in) under way, so two callers never make two guests. */
  const pending = useState<Promise<void> | null>('session-pending', () => null);

  /** The account of the current session; null when there is none the API accepts. */
  async function readAccount(): Promise<Account | null> {
    try {
      return await apiJson<Account>('/api/account');
    } catch (cause) {
      if (cause instanceof ApiRequestError && cause.status === 401) return null;
      throw cause;
    }
  }

  /** One attempt: reads the session, or starts a guest one; false when the API could not be had. */
  async function tryOnce(options: { startGuest: boolean }): Promise<boolean> {
    try {
      // better-auth's get-session refreshes the cookie of an active session.
      const [session, hinted] = await Promise.all([
        $auth.getSession(),
        readHint() ? readAccount() : Promise.resolve(undefined),
      ]);
      let current = hinted ?? null;
      if (hinted === undefined && session.data) current = await readAccount();
      if (!current && options.startGuest && guestsAllowed.value) {
        try {
          await apiFetch('/api/auth/sign-in/anonymous', { method: 'POST', json: {} });
          current = await readAccount();
        } catch (cause) {
          if (!(cause instanceof ApiRequestError && cause.code === 'guests_disabled')) throw cause;
          guestsAllowed.value = false;
        }
      }
      account.value = current;
      checked.value = true;
      writeHint(current !== null);
      const wanted = options.startGuest && guestsAllowed.value;
      error.value = current || !wanted ? null : 'Could not start a guest session.';
    } catch (cause) {
      error.value = `Could not reach the server: ${ApiRequestError.fromUnknown(cause).message}`;
    }
    return error.value === null;
  }

  /**
   * Reads the session, or starts a guest one (not on the sign-in and sign-up pages); while the
   * API cannot be had, keeps trying in the background. One check (or one retry loop) at a time.
   */
  function ensureSession(options: { startGuest: boolean }): Promise<void> {
    const settled = (ok: boolean): boolean => {
      if (ok) pending.value = null;
      return ok;
    };
    // While the retries go on, callers share the first attempt's outcome (the error it shows).
    pending.value ??= (async () => {
      if (settled(await tryOnce(options))) return;
      createBackoff().retry(async () => settled(await tryOnce(options)));
    })();
    return pending.value;
  }

  /** The account, once there is one (at once when there already is). */
  function whenSignedIn(): Promise<Account> {
    const current = account.value;
    if (current) return Promise.resolve(current);
    return new Promise((resolve) => {
      const stop = watch(account, (next) => {
        if (!next) return;
        stop();
        resolve(next);
      });
    });
  }

  /** This browser had a session last time: its pages may ask for their data at once. */
  function likelySignedIn(): boolean {
    return account.value !== null || readHint();
  }

  /** Signs up (or in) with email and password; a guest's chats move to the account on the server. */
  async function signInWithEmail(
    mode: 'sign-up' | 'sign-in',
    email: string,
    password: string,
  ): Promise<void> {
    const name = email.split('@')[0] || email;
    const body = mode === 'sign-up' ? { email, password, name } : { email, password };
    await apiFetch(`/api/auth/${mode}/email`, { method: 'POST', json: body });
  }

  /** Ends the session on the server. */
  async function signOut(): Promise<void> {
    await apiFetch('/api/auth/sign-out', { method: 'POST', json: {} });
    account.value = null;
    writeHint(false);
  }

  return {
    account: readonly(account),
    guestsAllowed: readonly(guestsAllowed),
    error: readonly(error),
    checked: readonly(checked),
    ensureSession,
    whenSignedIn,
    likelySignedIn,
    signInWithEmail,
    signOut,
  };
}

/**
 * After a sign-in, sign-up, sign-out or deletion, every piece of state (threads, open event
 * streams) belongs to someone else: load the app afresh.
 */
export function reloadAt(path: string): void {
  window.location.assign(path);
}
