import {
  type CreateThreadBody,
  THREAD_PAGE_DEFAULT,
  THREAD_PAGE_MAX,
  type Thread,
  type ThreadPage,
} from '@chat/contracts';

// One retry loop for the list, however many components ask for a refresh.
const listBackoff = createBackoff();

/**
 * The caller's threads, newest first, shared by the sidebar and the pages. The list comes in pages
 * (`GET /api/threads?limit&cursor`): the first on load, the next ones as the sidebar scrolls
 * (`loadMore`).
 */
export function useThreads() {
  const threads = useState<Thread[]>('threads', () => []);
  const loaded = useState<boolean>('threads-loaded', () => false);
  /** The last list request failed (the API is unreachable): it is being tried again. */
  const unreachable = useState<boolean>('threads-unreachable', () => false);
  /** Where the next page starts; null when the last page is in. */
  const nextCursor = useState<string | null>('threads-next-cursor', () => null);
  const loadingMore = useState<boolean>('threads-loading-more', () => false);
  // Counts this tab's renames and deletes: a list fetched while one was out may predate it.
  const localChanges = useState<number>('threads-local-changes', () => 0);
  // Threads this tab deleted (or is deleting): their pages go quietly, without "deleted elsewhere".
  const deletedHere = useState<string[]>('threads-deleted-here', () => []);

  /** Reloads the list from the top, as many threads as are shown now (one page at least). */
  async function refresh(): Promise<void> {
    if (!(await refreshOnce())) listBackoff.retry(refreshOnce);
  }

  async function refreshOnce(): Promise<boolean> {
    const limit = Math.min(THREAD_PAGE_MAX, Math.max(THREAD_PAGE_DEFAULT, threads.value.length));
    try {
      // A list that left before a rename or delete of this tab was answered may show the old
      // state: ask again (the local change is already shown).
      for (let attempt = 0; attempt < 3; attempt++) {
        const changes = localChanges.value;
        const page = await apiJson<ThreadPage>(`/api/threads?limit=${limit}`);
        if (changes !== localChanges.value) continue;
        threads.value = page.threads;
        nextCursor.value = page.nextCursor;
        break;
      }
      unreachable.value = false;
      loaded.value = true;
    } catch {
      // The sidebar keeps what it had and says it is reconnecting; the backoff tries again.
      unreachable.value = true;
    }
    return !unreachable.value;
  }

  /** Appends the next page, if there is one (the sidebar calls this as its end scrolls into view). */
  async function loadMore(): Promise<void> {
    const cursor = nextCursor.value;
    if (!cursor || loadingMore.value) return;
    loadingMore.value = true;
    try {
      const page = await apiJson<ThreadPage>(
        `/api/threads?limit=${THREAD_PAGE_DEFAULT}&cursor=${encodeURIComponent(cursor)}`,
      );
      // A refresh in between started the list again: this page belongs to the old one.
      if (nextCursor.value !== cursor) return;
      const shown = new Set(threads.value.map((thread) => thread.id));
      threads.value = [...threads.value, ...page.threads.filter((thread) => !shown.has(thread.id))];
      nextCursor.value = page.nextCursor;
    } catch {
      // The sidebar keeps what it has; scrolling to the end again tries again.
    } finally {
      loadingMore.value = false;
    }
  }

  /** A new chat; with `workspaceId` an agent chat (A1), refused `422 workspace_refused` with why. */
  async function create(body: CreateThreadBody = {}): Promise<Thread> {
    const thread = await apiJson<Thread>('/api/threads', { method: 'POST', json: body });
    threads.value = [thread, ...threads.value.filter((existing) => existing.id !== thread.id)];
    return thread;
  }

  function replace(threadId: string, change: (thread: Thread) => Thread): void {
    threads.value = threads.value.map((thread) => (thread.id === threadId ? change(thread) : thread));
  }

  /**
   * Renames a thread (`PATCH /api/threads/:id`, 1-200 characters after trimming). The list shows
   * the new title at once and goes back to the old one if the API refuses.
   */
  async function rename(threadId: string, title: string): Promise<Thread> {
    const wanted = title.trim();
    const previous = threads.value.find((thread) => thread.id === threadId)?.title;
    localChanges.value++;
    replace(threadId, (thread) => ({ ...thread, title: wanted }));
    try {
      const renamed = await apiJson<Thread>(threadPath(threadId), {
        method: 'PATCH',
        json: { title: wanted },
      });
      replace(threadId, () => renamed);
      return renamed;
    } catch (error) {
      // Undo, unless something newer (another rename, a refresh) already changed the title.
      if (previous !== undefined) {
        replace(threadId, (thread) => (thread.title === wanted ? { ...thread, title: previous } : thread));
      }
      throw error;
    } finally {
      localChanges.value++;
    }
  }

  /**
   * Deletes a thread (`DELETE /api/threads/:id`; the API stops a running turn first). Already
   * gone (404) counts as deleted.
   */
  async function remove(threadId: string): Promise<void> {
    localChanges.value++;
    deletedHere.value = [...deletedHere.value, threadId];
    try {
      await apiFetch(threadPath(threadId), { method: 'DELETE' });
    } catch (error) {
      if (!(error instanceof ApiRequestError && error.status === 404)) {
        deletedHere.value = deletedHere.value.filter((id) => id !== threadId);
        throw error;
      }
    } finally {
      localChanges.value++;
    }
    threads.value = threads.value.filter((thread) => thread.id !== threadId);
  }

  /** This tab deleted the thread (its `thread.deleted` event is no news here). */
  function wasDeletedHere(threadId: string): boolean {
    return deletedHere.value.includes(threadId);
  }

  return {
    threads: readonly(threads),
    loaded: readonly(loaded),
    unreachable: readonly(unreachable),
    hasMore: computed(() => nextCursor.value !== null),
    loadingMore: readonly(loadingMore),
    refresh,
    loadMore,
    create,
    rename,
    remove,
    wasDeletedHere,
  };
}

function threadPath(threadId: string): string {
  return `/api/threads/${encodeURIComponent(threadId)}`;
}

/** Where first messages wait for their chat's page in this tab, across a reload. */
const PENDING_FIRST_KEY = 'chat:pending-first-message';

function readPendingFirst(): Record<string, string> {
  try {
    const stored: unknown = JSON.parse(sessionStorage.getItem(PENDING_FIRST_KEY) ?? '{}');
    return stored && typeof stored === 'object' ? (stored as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/**
 * The first message typed on the empty start page, carried to the new thread's page, which
 * sends it once it is subscribed to the thread. Kept in the tab's session storage until then, so
 * a reload on the way does not lose it (its images wait in the chat's composer storage).
 */
export function usePendingFirstMessage() {
  const pending = useState<Record<string, string>>('pending-first-message', readPendingFirst);

  function save(next: Record<string, string>): void {
    pending.value = next;
    try {
      sessionStorage.setItem(PENDING_FIRST_KEY, JSON.stringify(next));
    } catch {
      // Storage off: the message still goes to the page in memory.
    }
  }

  function put(threadId: string, text: string): void {
    save({ ...pending.value, [threadId]: text });
  }

  function take(threadId: string): string | null {
    const text = pending.value[threadId] ?? null;
    if (text !== null) {
      const { [threadId]: _taken, ...rest } = pending.value;
      save(rest);
    }
    return text;
  }

  return { put, take };
}
