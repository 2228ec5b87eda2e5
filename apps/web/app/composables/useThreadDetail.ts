import type { Thread, ThreadDetail } from '@chat/contracts';
import type { useTranscript } from './useTranscript';
import type { useTurnQueue } from './useTurnQueue';

export interface ThreadDetailOptions {
  transcript: ReturnType<typeof useTranscript>;
  queue: ReturnType<typeof useTurnQueue>;
  isDisposed: () => boolean;
  /** Runs after every load or refetch, answered or not (the live turn may have waited for it). */
  afterFetch: () => void;
  /** Receives each detail shown (tool approvals and notes live beside the transcript). */
  onApply?: (detail: ThreadDetail) => void;
}

/**
 * `GET /api/threads/:id` and the other requests that answer a whole thread detail (a version
 * switch or delete): the thread, and the queue and transcript as the server has them.
 */
export function useThreadDetail(threadId: string, options: ThreadDetailOptions) {
  const { transcript, queue } = options;
  const path = `/api/threads/${encodeURIComponent(threadId)}`;

  const thread = shallowRef<Thread | null>(null);
  const loading = ref(true);
  const loadError = ref<ApiRequestError | null>(null);
  const deleted = ref(false);
  // Numbers detail requests, so an older answer never overwrites a newer one.
  let latestRequest = 0;
  // Detail requests waiting for their answer.
  let inFlight = 0;
  // Counts changes to the transcript made without a detail (a stream's end, a settle event): a
  // detail requested before one of them holds an older transcript, which is not shown.
  let transcriptChanges = 0;

  function apply(detail: ThreadDetail, queueVersion: number, transcriptAt: number): void {
    thread.value = detail.thread;
    queue.applyFetched(detail.turnQueue, queueVersion);
    options.onApply?.(detail);
    // Replacing messages mid-stream would drop the live reply; every stream's end brings the
    // transcript in line (its settle event, or a detail read).
    if (transcript.streamingTurnId.value !== null || transcriptAt !== transcriptChanges) return;
    transcript.setMessages(toChatUIMessages(detail.messages));
  }

  /** Sends a request that answers a thread detail and shows it, unless a newer one was sent. */
  async function request(target: string, init?: ApiRequestInit): Promise<void> {
    const number = ++latestRequest;
    const queueVersion = queue.currentVersion();
    const transcriptAt = transcriptChanges;
    inFlight++;
    try {
      const detail = await apiJson<ThreadDetail>(target, init);
      if (number === latestRequest && !options.isDisposed()) apply(detail, queueVersion, transcriptAt);
    } finally {
      inFlight--;
    }
  }

  const backoff = createBackoff();
  onScopeDispose(backoff.reset);

  /**
   * The first load. When the API cannot be reached (or has no session for us yet, while it
   * comes back), the page says it is reconnecting and loads again with backoff until it answers.
   */
  async function load(): Promise<void> {
    if (await loadOnce()) backoff.reset();
    else if (reconnecting.value) backoff.retry(loadOnce);
  }

  async function loadOnce(): Promise<boolean> {
    if (options.isDisposed()) return true;
    // Only the very first attempt shows "Loading…"; later ones keep saying "Reconnecting…".
    if (loadError.value === null) loading.value = true;
    try {
      await request(path);
      loadError.value = null;
    } catch (error) {
      loadError.value = ApiRequestError.fromUnknown(error);
    } finally {
      loading.value = false;
    }
    options.afterFetch();
    return loadError.value === null || !reconnecting.value;
  }

  /** The load failed in a way that waiting can fix: the API is down, or is starting again. */
  const reconnecting = computed(() => {
    const error = loadError.value;
    return error !== null && (error.retryable || error.status === 401);
  });

  /**
   * Makes the thread, queue and transcript authoritative again (titles, interrupted marks,
   * server ids). While a stream runs, the transcript part waits for its end (see `apply`).
   */
  async function refresh(): Promise<void> {
    if (options.isDisposed() || deleted.value) return;
    // Not loaded yet (the API was down): a refresh is the load that recovers the page.
    if (loadError.value) return load();
    try {
      await request(path);
    } catch (error) {
      if (error instanceof ApiRequestError && error.status === 404) deleted.value = true;
    }
    // Also after a failed or overtaken fetch.
    options.afterFetch();
  }

  return {
    thread: readonly(thread),
    loading: readonly(loading),
    loadError: readonly(loadError),
    reconnecting,
    deleted,
    /** A detail request is out: the transcript may be about to change. */
    isFetching: () => inFlight > 0,
    load,
    refresh,
    request,
    /** The transcript changed without a detail: details requested before show an older one. */
    transcriptChanged: () => {
      transcriptChanges++;
    },
  };
}
