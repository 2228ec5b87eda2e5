import type { Thread } from '@chat/contracts';

/** The caller's threads, newest first, shared by the sidebar and the pages. */
export function useThreads() {
  const threads = useState<Thread[]>('threads', () => []);
  const loaded = useState<boolean>('threads-loaded', () => false);

  async function refresh(): Promise<void> {
    try {
      const body = await apiJson<Thread[] | { threads: Thread[] }>('/api/threads');
      threads.value = Array.isArray(body) ? body : body.threads;
    } catch {
      // The sidebar keeps what it had; the next refresh tries again.
    } finally {
      loaded.value = true;
    }
  }

  async function create(title?: string): Promise<Thread> {
    const body = await apiJson<Thread | { thread: Thread }>('/api/threads', {
      method: 'POST',
      json: title ? { title } : {},
    });
    const thread = 'thread' in body ? body.thread : body;
    threads.value = [thread, ...threads.value.filter((existing) => existing.id !== thread.id)];
    return thread;
  }

  return { threads: readonly(threads), loaded: readonly(loaded), refresh, create };
}

/**
 * The first message typed on the empty start page, carried to the new thread's page,
 * which sends it once it is subscribed to the thread.
 */
export function usePendingFirstMessage() {
  const pending = useState<Record<string, string>>('pending-first-message', () => ({}));

  function put(threadId: string, text: string): void {
    pending.value = { ...pending.value, [threadId]: text };
  }

  function take(threadId: string): string | null {
    const text = pending.value[threadId] ?? null;
    if (text !== null) {
      const { [threadId]: _taken, ...rest } = pending.value;
      pending.value = rest;
    }
    return text;
  }

  return { put, take };
}
