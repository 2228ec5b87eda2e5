import type { Share, ShareAnswer, ShareList } from '@chat/contracts';

/**
 * The live share links of one thread (H1), for the Share dialog: list them, make a new one (a
 * snapshot of the shown version as it is now) and revoke one.
 */
export function useShares(threadId: string) {
  const base = `/api/threads/${encodeURIComponent(threadId)}/shares`;
  const shares = ref<Share[]>([]);
  /** The link made last in this dialog, shown on top with its Copy button. */
  const latest = ref<Share | null>(null);
  const loading = ref(false);
  const creating = ref(false);
  const revoking = ref<string | null>(null);
  const error = ref<string | null>(null);
  /**
   * Counts the dialog's own changes (a link made or revoked). A list asked for before one of them
   * answers with the links as they were, so it is read again rather than shown over the change.
   */
  let changes = 0;

  async function run(work: () => Promise<void>): Promise<void> {
    error.value = null;
    try {
      await work();
    } catch (cause) {
      error.value = ApiRequestError.fromUnknown(cause).message;
    }
  }

  async function load(): Promise<void> {
    loading.value = true;
    await run(async () => {
      for (;;) {
        const asked = changes;
        const listed = (await apiJson<ShareList>(base)).shares;
        if (asked !== changes) continue;
        shares.value = listed;
        return;
      }
    });
    loading.value = false;
  }

  async function create(): Promise<void> {
    creating.value = true;
    await run(async () => {
      const { share } = await apiJson<ShareAnswer>(base, { method: 'POST', json: {} });
      changes += 1;
      latest.value = share;
      shares.value = [share, ...shares.value.filter((listed) => listed.token !== share.token)];
    });
    creating.value = false;
  }

  async function revoke(token: string): Promise<void> {
    revoking.value = token;
    await run(async () => {
      await apiFetch(`/api/shares/${encodeURIComponent(token)}`, { method: 'DELETE' }).catch((cause) => {
        // Already revoked (in another tab, say): it is gone either way.
        if (!(cause instanceof ApiRequestError && cause.status === 404)) throw cause;
      });
      changes += 1;
      shares.value = shares.value.filter((share) => share.token !== token);
      if (latest.value?.token === token) latest.value = null;
    });
    revoking.value = null;
  }

  function forgetLatest(): void {
    latest.value = null;
  }

  return {
    shares: readonly(shares),
    latest: readonly(latest),
    loading: readonly(loading),
    creating: readonly(creating),
    revoking: readonly(revoking),
    error: readonly(error),
    load,
    create,
    revoke,
    forgetLatest,
  };
}
