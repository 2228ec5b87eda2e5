const STORAGE_KEY = 'chat:start-chat';

function readStored(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

function writeStored(threadId: string | null): void {
  try {
    if (threadId) localStorage.setItem(STORAGE_KEY, threadId);
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage off: the chat is reused for as long as the page lives.
  }
}

/**
 * The chat behind the start page. Images need a chat to be uploaded to, so the first image
 * attached on the start page makes one; until its first message is sent it is the start page's,
 * not a chat yet: the sidebar leaves it out, and the start page keeps using it (after a reload
 * too, with its images) instead of making another. Sending the first message hands it to its
 * own page (`release`). A first message without images makes its chat only when it is sent.
 * The id is kept in this browser; `check` lets it go when the chat is not the signed-in
 * account's (deleted, or someone else signed in here). A guest who signs up keeps it: the chat
 * moves to the account.
 */
export function useStartChat() {
  const { whenSignedIn } = useSession();
  const { create } = useThreads();
  const threadId = useState<string | null>('start-chat', readStored);
  let making: Promise<string> | null = null;

  function set(next: string | null): void {
    threadId.value = next;
    writeStored(next);
  }

  /** The start page's chat, made now if there is none (one at a time, however many images come). */
  async function ensure(): Promise<string> {
    await whenSignedIn();
    if (threadId.value) return threadId.value;
    making ??= create()
      .then((thread) => {
        set(thread.id);
        return thread.id;
      })
      .finally(() => {
        making = null;
      });
    return await making;
  }

  /**
   * Whether the kept chat can still be used; false (and forgotten) when the API does not know it
   * for this account. No chat kept: true.
   */
  async function check(): Promise<boolean> {
    const kept = threadId.value;
    if (!kept) return true;
    await whenSignedIn();
    try {
      await apiFetch(`/api/threads/${encodeURIComponent(kept)}`);
    } catch (cause) {
      if (!(cause instanceof ApiRequestError && cause.status === 404)) return true;
      if (threadId.value === kept) set(null);
      return false;
    }
    return true;
  }

  /** Its first message is on the way to its page: from now on it is a chat like any other. */
  function release(): void {
    set(null);
  }

  return { threadId: readonly(threadId), ensure, check, release };
}
