export interface SessionUser {
  id: string;
  name: string;
  isAnonymous: boolean;
}

/**
 * The caller's better-auth session. First visit: no session, so sign in as a guest
 * (anonymous plugin); the API sets the session cookie. The `session` route middleware calls
 * `ensureSession` before the first page that needs one. Failures are kept in `error`
 * for the layout to show rather than thrown, so the shell still renders.
 */
export function useSession() {
  const { $auth } = useNuxtApp();
  const user = useState<SessionUser | null>('session-user', () => null);
  const error = useState<string | null>('session-error', () => null);

  async function readSessionUser(): Promise<SessionUser | null> {
    const { data, error: fetchError } = await $auth.getSession();
    if (fetchError) throw new Error(fetchError.message ?? `status ${fetchError.status}`);
    if (!data) return null;
    const sessionUser = data.user as typeof data.user & { isAnonymous?: boolean | null };
    return { id: sessionUser.id, name: sessionUser.name, isAnonymous: sessionUser.isAnonymous === true };
  }

  async function ensureSession(): Promise<void> {
    try {
      let current = await readSessionUser();
      if (!current) {
        const signedIn = await $auth.signIn.anonymous();
        if (signedIn.error) throw new Error(signedIn.error.message ?? `status ${signedIn.error.status}`);
        current = await readSessionUser();
      }
      user.value = current;
      error.value = current ? null : 'Could not start a guest session.';
    } catch (cause) {
      error.value = `Could not start a session: ${cause instanceof Error ? cause.message : String(cause)}`;
    }
  }

  return { user: readonly(user), error: readonly(error), ensureSession };
}
