import type { Thread, ThreadDetail, ThreadEvent, Turn, TurnQueue } from '@chat/contracts';
import type { ChatUIMessage } from '~/utils/chatMessages';
import type { OpenTurnStream } from '~/utils/turnStreamTransport';

/** How a send ended, from the composer's point of view. */
export type SendOutcome = 'accepted' | 'retryable' | 'refused';

export interface ThreadNotice {
  message: string;
  /** Sends the same request again (same clientRequestId, so never a second turn, Q1). */
  retry?: () => void;
}

/**
 * One open thread: its transcript, its queue, and the rules that keep this tab in step
 * with the server and with other tabs.
 *
 * Every turn stream this tab shows goes through `streamTurn`; whether a stream should be
 * running is decided in one place, `reconcile`, after every change:
 * - a turn is active on the server and this tab is not showing it -> attach (replay + live);
 * - no turn is active, one just settled, and the head is `queued` -> claim it (Q10).
 *
 * Versions (B1-B5): an edit streams its new reply like a send; a switch or a delete answers
 * the new thread detail, which replaces the transcript. The server refuses all three while a
 * turn runs or the queue is not empty (thread_busy), so the controls wait for that too.
 */
export function useThread(threadId: string) {
  const base = `/api/threads/${encodeURIComponent(threadId)}`;
  const queue = useTurnQueue(threadId);
  const stream = useTurnStream(threadId);
  const { refresh: refreshThreadList } = useThreads();

  const thread = shallowRef<Thread | null>(null);
  const loading = ref(true);
  const loadError = ref<ApiRequestError | null>(null);
  const deleted = ref(false);
  const notice = ref<ThreadNotice | null>(null);

  // Requests out that may start a turn in this tab (send, claim, send-now). While one is
  // out, an active turn we do not know may be our own, so nothing attaches or claims.
  const startsInFlight = ref(0);
  // Plain Stop or Stop & send in progress: the local stream is being ended on purpose.
  const stopping = ref(0);
  // Turns this tab streamed to their end or stopped. The server may still call them
  // active for a moment after their stream closed; never attach to them again.
  const finishedTurnIds = new Set<string>();
  // Set when a turn settles: the next idle moment claims the queue head (viewer-claimed draining).
  let claimArmed = false;
  /** The user message open in the inline editor (one at a time). */
  const editingMessageId = ref<string | null>(null);
  // Version changes (edit, switch, delete) waiting for their answer.
  const changesInFlight = ref(0);
  // Numbers detail fetches, so an older answer never overwrites a newer one.
  let detailRequests = 0;
  // Detail fetches (refetch, switch, delete) waiting for their answer.
  let detailsInFlight = 0;
  let disposed = false;

  const isStreaming = computed(() => stream.streamingTurnId.value !== null);
  /** A reply is being produced: on the server, or in this tab. Sends now queue (Q3). */
  const isBusy = computed(
    () => queue.activeTurn.value !== null || isStreaming.value || startsInFlight.value > 0,
  );
  /** An edit, switch or delete is waiting for the server's answer. */
  const changingVersions = computed(() => changesInFlight.value > 0);
  /**
   * Why versions cannot change right now, or null. The server refuses an edit, a switch or a
   * delete with thread_busy while a turn runs or the queue is not empty; the same words here.
   */
  const versionsLockedReason = computed(() => {
    if (changingVersions.value) return 'Changing versions…';
    if (isBusy.value) return 'Wait for the reply to finish, or stop it, before changing versions.';
    if (queue.items.value.length > 0) return 'Send or delete the queued messages before changing versions.';
    return null;
  });
  /** A send now would be refused with queue_full (Q4): tell the person instead of sending. */
  const queueIsFull = computed(() => queue.isFull.value);
  // The turn whose stream ended in an error (the error chunk's text is what the banner shows).
  const failedStreamTurnId = ref<string | null>(null);
  const errorMessage = computed(() => {
    if (notice.value) return notice.value.message;
    const streamError = stream.error.value;
    if (!streamError) return null;
    // A failed turn stays at the queue head with its error (Q11): the Dock already says it.
    const shownInDock = queue.items.value.some(
      (turn) => turn.id === failedStreamTurnId.value && turn.status === 'failed',
    );
    return shownInDock ? null : streamError.message;
  });

  function showNotice(error: unknown, retry?: () => void): void {
    const apiError = ApiRequestError.fromUnknown(error);
    const message =
      apiError.code === 'queue_full'
        ? 'The queue is full (5 / 5). Wait for a reply, or remove a queued message.'
        : apiError.message;
    notice.value = { message, retry: apiError.retryable ? retry : undefined };
  }

  function dismissNotice(): void {
    notice.value = null;
    stream.clearError();
  }

  // --- loading and refetching -------------------------------------------------------

  function applyDetail(detail: ThreadDetail, queueVersion: number): void {
    thread.value = detail.thread;
    queue.applyFetched(detail.turnQueue, queueVersion);
    // Replacing messages mid-stream would drop the live reply; every stream's end refetches.
    if (isStreaming.value) return;
    stream.setMessages(toChatUIMessages(detail.messages));
  }

  async function fetchDetail(): Promise<ThreadDetail> {
    return apiJson<ThreadDetail>(base);
  }

  async function load(): Promise<void> {
    loading.value = true;
    const request = ++detailRequests;
    const queueVersion = queue.currentVersion();
    try {
      const detail = await fetchDetail();
      if (request === detailRequests) applyDetail(detail, queueVersion);
      loadError.value = null;
    } catch (error) {
      loadError.value = ApiRequestError.fromUnknown(error);
    } finally {
      loading.value = false;
    }
    reconcile();
  }

  /**
   * Makes the thread, queue and transcript authoritative again (titles, interrupted marks,
   * server ids). While a stream runs, the transcript part waits for its end (applyDetail).
   */
  async function refresh(): Promise<void> {
    if (disposed || deleted.value) return;
    const request = ++detailRequests;
    const queueVersion = queue.currentVersion();
    detailsInFlight++;
    try {
      const detail = await fetchDetail();
      if (request === detailRequests && !disposed) applyDetail(detail, queueVersion);
    } catch (error) {
      if (error instanceof ApiRequestError && error.status === 404) deleted.value = true;
    } finally {
      detailsInFlight--;
    }
    // Also after a failed or overtaken fetch: reconcile may have waited for this one.
    reconcile();
  }

  // --- streams ----------------------------------------------------------------------

  /**
   * Shows `turn` in the transcript: its user message (this tab's own turns always add it;
   * an attach adds it only when the loaded transcript does not have it yet), then its reply.
   */
  async function streamTurn(
    turn: Pick<Turn, 'id' | 'text'>,
    open: OpenTurnStream,
    origin: 'own' | 'attached',
  ): Promise<void> {
    if (disposed) {
      // The page went away while the request was out: end it rather than read it for nobody.
      void open(AbortSignal.abort()).catch(() => undefined);
      return;
    }
    if (origin === 'own' || !hasUserMessageOf(stream.messages.value, turn)) {
      stream.appendMessage(optimisticUserMessage(turn));
    }
    await stream.consume(turn.id, open);
    finishedTurnIds.add(turn.id);
    failedStreamTurnId.value = stream.status.value === 'error' ? turn.id : null;
    claimArmed = true;
    // A Stop or Stop & send ended this stream; whoever stopped it refetches afterwards.
    if (stopping.value > 0) return;
    await refresh();
  }

  /** Follows a turn this tab did not start: another tab's, or one running before a reload. */
  function attach(turn: Turn): void {
    void streamTurn(
      turn,
      (signal) =>
        fetch(`${base}/turns/${encodeURIComponent(turn.id)}/stream`, { signal, credentials: 'same-origin' }),
      'attached',
    );
  }

  /** A response already received, handed to the chat; aborting the chat aborts its request. */
  function streamOf(response: Response, request: AbortController): OpenTurnStream {
    return async (signal) => {
      if (signal.aborted) request.abort();
      else signal.addEventListener('abort', () => request.abort(), { once: true });
      return response;
    };
  }

  // --- actions ----------------------------------------------------------------------

  // Sends go out one at a time: the queue is ordered by arrival, and two quick Enters must
  // not overtake each other on the way to the server.
  let previousSend: Promise<unknown> = Promise.resolve();

  /**
   * Sends a message. Idle thread: it is claimed at once and its reply streams here.
   * Busy thread: it is queued (202) and shows up in the Dock, never in the transcript.
   * Resolves once the server answered (not when a streamed reply ends).
   */
  function send(text: string, clientRequestId: string = crypto.randomUUID()): Promise<SendOutcome> {
    dismissNotice();
    startsInFlight.value++;
    const outcome = previousSend.then(() => postTurn(text, clientRequestId));
    previousSend = outcome.catch(() => undefined);
    return outcome;
  }

  /** POST /turns; the caller counted it in startsInFlight, this uncounts it. */
  async function postTurn(text: string, clientRequestId: string): Promise<SendOutcome> {
    const request = new AbortController();
    let response: Response;
    try {
      response = await apiFetch(`${base}/turns`, {
        method: 'POST',
        json: { clientRequestId, text },
        signal: request.signal,
      });
    } catch (error) {
      startsInFlight.value--;
      showNotice(error, () => void send(text, clientRequestId));
      reconcile();
      return ApiRequestError.fromUnknown(error).retryable ? 'retryable' : 'refused';
    }

    if (response.status === 202) {
      try {
        const body = (await response.json()) as { turn: Turn; turnQueue: TurnQueue };
        queue.apply(body.turnQueue);
      } catch {
        // Queued all the same; the queue.changed event brings the Dock up to date.
      } finally {
        startsInFlight.value--;
      }
      reconcile();
      return 'accepted';
    }

    const turnId = response.headers.get('x-turn-id') ?? `local-${clientRequestId}`;
    const streaming = streamTurn({ id: turnId, text }, streamOf(response, request), 'own');
    startsInFlight.value--;
    void streaming;
    void refreshThreadList();
    return 'accepted';
  }

  /** Plain Stop (S1, S3): a server interrupt; the partial reply stays, the queue stays. */
  async function stop(): Promise<void> {
    const stoppedTurnId = queue.activeTurn.value?.id ?? stream.streamingTurnId.value;
    if (stoppedTurnId) finishedTurnIds.add(stoppedTurnId);
    stopping.value++;
    try {
      const [, interrupted] = await Promise.allSettled([
        stream.stop(),
        apiJson<{ turn: Turn | null }>(`${base}/interrupt`, { method: 'POST' }),
      ]);
      if (interrupted.status === 'rejected') showNotice(interrupted.reason);
      else if (interrupted.value.turn?.status === 'interrupted')
        stream.markInterrupted(interrupted.value.turn.id);
    } finally {
      stopping.value--;
    }
    claimArmed = true;
    await refresh();
  }

  /**
   * Send now / Stop & send on the queue head (Q9, S4): stop the local stream first, then the
   * server interrupts the active turn, waits for the lock, claims the head and streams it.
   */
  async function sendNow(turn: Turn): Promise<void> {
    dismissNotice();
    startsInFlight.value++;
    const interruptedTurnId = queue.activeTurn.value?.id ?? stream.streamingTurnId.value;
    if (interruptedTurnId) finishedTurnIds.add(interruptedTurnId);
    stopping.value++;
    try {
      await stream.stop();
    } finally {
      stopping.value--;
    }

    const request = new AbortController();
    let response: Response;
    try {
      response = await apiFetch(`${base}/queue/${encodeURIComponent(turn.id)}/send-now`, {
        method: 'POST',
        signal: request.signal,
      });
    } catch (error) {
      startsInFlight.value--;
      // not_eligible: another tab claimed the head as the interrupt settled. The server reserved
      // the handoff on it, so it runs as asked; this tab follows it (refresh attaches).
      if (!(error instanceof ApiRequestError && error.code === 'not_eligible')) showNotice(error);
      await refresh();
      return;
    }
    const turnId = response.headers.get('x-turn-id') ?? turn.id;
    queue.removeLocally(turnId);
    const streaming = streamTurn({ id: turnId, text: turn.text }, streamOf(response, request), 'own');
    startsInFlight.value--;
    await streaming;
  }

  /** Viewer claim of the queue head after a turn settled (Q10). Losing the race is normal. */
  async function claimHead(head: Turn): Promise<void> {
    claimArmed = false;
    startsInFlight.value++;
    const request = new AbortController();
    let response: Response;
    try {
      response = await apiFetch(`${base}/queue/claim`, { method: 'POST', signal: request.signal });
    } catch (error) {
      startsInFlight.value--;
      // not_eligible: another tab claimed first (we attach to it), or the head is blocked.
      if (!(error instanceof ApiRequestError && error.code === 'not_eligible')) showNotice(error);
      reconcile();
      return;
    }
    const turnId = response.headers.get('x-turn-id') ?? head.id;
    const text = queue.items.value.find((item) => item.id === turnId)?.text ?? head.text;
    queue.removeLocally(turnId);
    const streaming = streamTurn({ id: turnId, text }, streamOf(response, request), 'own');
    startsInFlight.value--;
    await streaming;
  }

  // --- versions (branches) ----------------------------------------------------------

  /**
   * Edits a user message into a new version (B1): the transcript becomes the messages before
   * it, the edited message, and the new reply as it streams. Resolves once the server answered;
   * false when it refused (the banner says why and the transcript is left as it was).
   */
  function editMessage(messageId: string, text: string): Promise<boolean> {
    const index = stream.messages.value.findIndex((message) => message.id === messageId);
    if (index < 0) return Promise.resolve(false);
    // Taken now: a refetch while the request is out may already show the new version.
    const before = stream.messages.value.slice(0, index);
    return postVersion(messageId, text, before, crypto.randomUUID());
  }

  async function postVersion(
    messageId: string,
    text: string,
    before: ChatUIMessage[],
    clientRequestId: string,
  ): Promise<boolean> {
    dismissNotice();
    startsInFlight.value++;
    changesInFlight.value++;
    const request = new AbortController();
    let response: Response;
    try {
      response = await apiFetch(`${base}/messages/${encodeURIComponent(messageId)}/versions`, {
        method: 'POST',
        json: { clientRequestId, text },
        signal: request.signal,
      });
    } catch (error) {
      startsInFlight.value--;
      showNotice(error, () => void postVersion(messageId, text, before, clientRequestId));
      reconcile();
      return false;
    } finally {
      changesInFlight.value--;
    }
    editingMessageId.value = null;

    if (response.status === 202) {
      // A retry whose turn no longer streams here (202 `{ turn, turnQueue }`): show how it ended.
      void response.body?.cancel();
      startsInFlight.value--;
      await refresh();
      return true;
    }
    const turnId = response.headers.get('x-turn-id') ?? `local-${clientRequestId}`;
    // Cut and start streaming in one go, so no refetch lands in between (applyDetail skips the
    // transcript while a stream runs; the stream's end refetches the new version's ids).
    stream.setMessages(before);
    const streaming = streamTurn({ id: turnId, text }, streamOf(response, request), 'own');
    startsInFlight.value--;
    void streaming;
    void refreshThreadList();
    return true;
  }

  /** Shows version `branchId` (B2); the server stores the choice, so a reload shows it too (B5). */
  function switchVersion(branchId: string): Promise<boolean> {
    return changeVersions(`${base}/active-branch`, { method: 'PUT', json: { branchId } });
  }

  /** Deletes the latest user message of this version and its reply (B4). */
  function deleteMessage(messageId: string): Promise<boolean> {
    return changeVersions(`${base}/messages/${encodeURIComponent(messageId)}`, { method: 'DELETE' });
  }

  /** A switch or delete: the server answers the new thread detail, which is shown as is. */
  async function changeVersions(path: string, init: RequestInit & { json?: unknown }): Promise<boolean> {
    dismissNotice();
    changesInFlight.value++;
    detailsInFlight++;
    const request = ++detailRequests;
    const queueVersion = queue.currentVersion();
    let changed = false;
    try {
      const detail = await apiJson<ThreadDetail>(path, init);
      if (request === detailRequests && !disposed) applyDetail(detail, queueVersion);
      changed = true;
    } catch (error) {
      // thread_busy, not_latest_turn, ...: nothing changed on the server, nothing changes here.
      showNotice(error);
    } finally {
      changesInFlight.value--;
      detailsInFlight--;
    }
    reconcile();
    return changed;
  }

  function startEditingMessage(messageId: string): void {
    editingMessageId.value = messageId;
  }

  function cancelEditingMessage(): void {
    editingMessageId.value = null;
  }

  // The message being edited left the transcript (another tab switched versions, say).
  watch(stream.messages, (messages) => {
    const editing = editingMessageId.value;
    if (editing && !messages.some((message) => message.id === editing)) editingMessageId.value = null;
  });

  // --- the queue ----------------------------------------------------------------------

  async function editQueued(turn: Turn, text: string): Promise<boolean> {
    const unblocksHead = turn.status === 'failed' && queue.head.value?.id === turn.id;
    try {
      await queue.edit(turn.id, text);
    } catch (error) {
      showNotice(error);
      return false;
    }
    queue.editingTurnId.value = null;
    // Editing a failed head unblocks the queue (Q11): carry on draining it.
    if (unblocksHead) claimArmed = true;
    reconcile();
    return true;
  }

  async function deleteQueued(turn: Turn): Promise<void> {
    const unblocksHead = turn.status === 'failed' && queue.head.value?.id === turn.id;
    try {
      await queue.remove(turn.id);
    } catch (error) {
      showNotice(error);
      return;
    }
    if (unblocksHead) claimArmed = true;
    reconcile();
  }

  function startEditing(turn: Turn): void {
    queue.editingTurnId.value = turn.id;
  }

  function cancelEditing(): void {
    queue.editingTurnId.value = null;
    reconcile();
  }

  // --- keeping in step ----------------------------------------------------------------

  /** Decides whether this tab should attach to a running turn or claim the head. */
  function reconcile(): void {
    // Until the first load, the transcript an attach would append to is not there yet.
    if (loading.value || disposed || deleted.value) return;
    if (startsInFlight.value > 0 || stopping.value > 0) return;
    // A refetch is out: the transcript an attach appends to may be about to change (another
    // tab's edit sends thread.changed, then turn.started). Its end reconciles again.
    if (detailsInFlight > 0) return;
    const active = queue.activeTurn.value;
    if (active) {
      if (stream.streamingTurnId.value !== active.id && !finishedTurnIds.has(active.id)) attach(active);
      return;
    }
    const head = queue.head.value;
    if (
      claimArmed &&
      !isStreaming.value &&
      head?.status === 'queued' &&
      // Do not run the old text of a head someone is editing; claim once the edit ends.
      queue.editingTurnId.value !== head.id
    ) {
      void claimHead(head);
    }
  }

  function onThreadEvent(event: ThreadEvent): void {
    if (event.threadId !== threadId) return;
    switch (event.type) {
      case 'queue.changed':
      case 'turn.started':
        queue.apply(event.turnQueue);
        break;
      case 'turn.settled':
        queue.apply(event.turnQueue);
        if (event.turn.status === 'interrupted') stream.markInterrupted(event.turn.id);
        claimArmed = true;
        void refresh();
        break;
      case 'thread.changed':
        void refresh();
        void refreshThreadList();
        break;
      case 'thread.deleted':
        deleted.value = true;
        void refreshThreadList();
        return;
    }
    reconcile();
  }

  const events = useThreadEvents(threadId, {
    onEvent: onThreadEvent,
    // After a reconnect, events may have been missed: catch up (not on the first connect,
    // which races the initial load).
    onConnected: () => {
      if (!loading.value) void refresh();
    },
  });

  /** Subscribe first, then load, so no event between the two is lost. */
  async function open(): Promise<void> {
    events.open();
    await load();
  }

  onScopeDispose(() => {
    disposed = true;
    void stream.stop();
  });

  return {
    thread,
    loading,
    loadError,
    deleted,
    messages: stream.messages,
    status: stream.status,
    isStreaming,
    isBusy,
    queue,
    queueIsFull,
    versionsLockedReason,
    changingVersions,
    editingMessageId,
    errorMessage,
    notice,
    open,
    send,
    stop,
    sendNow,
    startEditing,
    cancelEditing,
    editQueued,
    deleteQueued,
    editMessage,
    switchVersion,
    deleteMessage,
    startEditingMessage,
    cancelEditingMessage,
    dismissNotice,
  };
}
