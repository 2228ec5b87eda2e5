import type { Attachment, SendMode, Turn, TurnQueue } from '@chat/contracts';
import type { OpenTurnStream } from '~/utils/turnStreamTransport';
import type { LiveTurnOptions, SendOutcome, TurnStreamRequest, TurnStreamStart } from './liveTurnTypes';

/**
 * The turn being produced, and this tab's part in it: sending, Stop, Send now / Stop & send,
 * following another tab's turn, and claiming the queue head whenever it may run.
 *
 * Every turn stream this tab shows goes through `streamTurn`; whether a stream should be
 * running is decided in one place, `reconcile`, after every change:
 * - a turn is active on the server and this tab is not showing it -> attach (replay + live);
 * - this page is attached (its events stream is open), no turn is active, and the head is
 *   `queued` -> claim it (Q10): on open, reload, reconnect and after every settle. Racing tabs:
 *   the server lets one win; the others are refused and attach to its turn.
 */
export function useLiveTurn(threadId: string, options: LiveTurnOptions) {
  const { transcript, queue, detail, notice } = options;
  const base = `/api/threads/${encodeURIComponent(threadId)}`;

  // Requests out that may start a turn in this tab (send, claim, send-now, edit). While one is
  // out, an active turn we do not know may be our own, so nothing attaches or claims.
  const startsInFlight = ref(0);
  // Plain Stop or Stop & send in progress: the local stream is being ended on purpose.
  const stopping = ref(0);
  // Turns this tab streamed to their end or stopped. The server may still call them
  // active for a moment after their stream closed; never attach to them again.
  const finishedTurnIds = new Set<string>();
  // The queue version a claim of this tab was refused at (another tab won, say): no new claim
  // until the queue changes, so a stale view never turns into a loop of refused claims.
  let claimRefusedAt: number | null = null;
  // Requests out that may start a turn, until their answer is in and shown: Stop waits for them.
  const pendingStarts = new Set<Promise<unknown>>();

  const isStreaming = computed(() => transcript.streamingTurnId.value !== null);
  /** A reply is being produced: on the server, or in this tab. Sends now queue (Q3). */
  const isBusy = computed(
    () => queue.activeTurn.value !== null || isStreaming.value || startsInFlight.value > 0,
  );

  /**
   * Shows `turn` in the transcript: its user message (this tab's own turns always add it;
   * an attach adds it only when the loaded transcript does not have it yet), then its reply.
   */
  async function streamTurn(
    turn: Pick<Turn, 'id' | 'text'> & Partial<Pick<Turn, 'attachments'>>,
    open: OpenTurnStream,
    origin: 'own' | 'attached' | 'continued',
  ): Promise<void> {
    if (options.isDisposed()) {
      // The page went away while the request was out: end it rather than read it for nobody.
      void open(AbortSignal.abort()).catch(() => undefined);
      return;
    }
    if (origin === 'own' || (origin === 'attached' && !hasUserMessageOf(transcript.messages.value, turn))) {
      transcript.appendMessage(optimisticUserMessage(turn));
    }
    if (origin !== 'own') transcript.cutAfterToolCall(options.toolCallIdsOf(turn.id));
    await transcript.consume(turn.id, open);
    finishedTurnIds.add(turn.id);
    // A Stop or Stop & send ended this stream; whoever stopped it refetches afterwards.
    if (stopping.value > 0) return;
    await options.afterTurnStream(turn.id);
  }

  /** Follows a turn this tab did not start: another tab's, or one running before a reload. */
  function attach(turn: Turn): void {
    const path = `${base}/turns/${encodeURIComponent(turn.id)}/stream`;
    void streamTurn(turn, (signal) => fetch(path, { signal, credentials: 'same-origin' }), 'attached');
  }

  /**
   * Sends `request` and, when the server answers with a turn's stream, shows that turn. Owns
   * what every start shares: the count of starts in flight, the request's abort (ending the
   * chat's stream ends it), the turn's id from `x-turn-id`, and the notice on a refusal. The
   * caller decides what follows a refusal (reconcile or refetch) and whether to wait for the end.
   */
  function startTurnStream(request: TurnStreamRequest): Promise<TurnStreamStart> {
    const start = requestTurnStream(request);
    pendingStarts.add(start);
    void start.finally(() => pendingStarts.delete(start));
    return start;
  }

  async function requestTurnStream(request: TurnStreamRequest): Promise<TurnStreamStart> {
    startsInFlight.value++;
    const connection = new AbortController();
    let response: Response;
    try {
      await request.after;
      response = await apiFetch(request.path, { ...request.init, signal: connection.signal });
    } catch (error) {
      startsInFlight.value--;
      const refusal = ApiRequestError.fromUnknown(error);
      if (!(refusal.code && request.quiet?.includes(refusal.code)))
        notice.show(refusal, request.retry, request.refusalPrefix);
      return { kind: 'refused', error: refusal };
    }

    if (response.status === 202) {
      try {
        await request.onQueued?.(response);
      } finally {
        startsInFlight.value--;
      }
      return { kind: 'queued' };
    }

    // Every turn stream the API answers names its turn (platform/http.ts turnStreamResponse).
    const turnId = response.headers.get('x-turn-id') as string;
    const text = request.textOf(turnId);
    const attachments = [
      ...(request.attachments ?? queue.items.value.find((item) => item.id === turnId)?.attachments ?? []),
    ];
    request.beforeShow?.(turnId);
    // The chat's abort (Stop, another stream starting) ends this request.
    const open: OpenTurnStream = async (signal) => {
      if (signal.aborted) connection.abort();
      else signal.addEventListener('abort', () => connection.abort(), { once: true });
      return response;
    };
    const ended = streamTurn(
      { id: turnId, text, attachments },
      open,
      request.continues ? 'continued' : 'own',
    );
    startsInFlight.value--;
    return { kind: 'streaming', ended };
  }

  // Sends go out one at a time: the queue is ordered by arrival, and two quick Enters must
  // not overtake each other on the way to the server.
  let previousSend: Promise<unknown> = Promise.resolve();

  /**
   * Sends a message. Idle thread: it is claimed at once and its reply streams here.
   * Busy thread: it is queued (202) and shows up in the Dock, never in the transcript.
   * Resolves once the server answered (not when a streamed reply ends).
   */
  function send(
    text: string,
    clientRequestId: string = crypto.randomUUID(),
    retry: () => void = () => void send(text, clientRequestId, undefined, mode, attachments),
    mode: SendMode = 'queue',
    /** Uploaded images the message carries. */
    attachments: readonly Attachment[] = [],
  ): Promise<SendOutcome> {
    notice.dismiss();
    const attachmentIds = attachments.map((attachment) => attachment.id);
    const images = attachmentIds.length > 0 ? { attachmentIds } : {};
    const outcome = startTurnStream({
      path: `${base}/turns`,
      // A steer joins the running reply at its next step (202, `steer_pending`); idle, it is a send.
      init: {
        method: 'POST',
        json: { clientRequestId, text, ...(mode === 'steer' ? { mode } : {}), ...images },
      },
      after: previousSend,
      textOf: () => text,
      attachments,
      onQueued: async (response) => {
        try {
          const body = (await response.json()) as { turn: Turn; turnQueue: TurnQueue };
          queue.apply(body.turnQueue);
        } catch {
          // Queued all the same (the body was cut off); the queue.changed event brings the Dock up to date.
        }
      },
      retry,
      refusalPrefix: 'Not sent; your message is back in the box.',
    }).then((start): SendOutcome => {
      if (start.kind === 'streaming') void options.refreshThreadList();
      else reconcile();
      if (start.kind !== 'refused') return 'accepted';
      return start.error.retryable ? 'retryable' : 'refused';
    });
    previousSend = outcome.catch(() => undefined);
    return outcome;
  }

  /** Ends the local stream on purpose (its end does not refetch; the caller does). */
  async function stopLocalStream(): Promise<void> {
    const stoppedTurnId = queue.activeTurn.value?.id ?? transcript.streamingTurnId.value;
    if (stoppedTurnId) finishedTurnIds.add(stoppedTurnId);
    stopping.value++;
    try {
      await transcript.stop();
    } finally {
      stopping.value--;
    }
  }

  /**
   * Plain Stop (S1, S3): a server interrupt; the partial reply stays, the queue stays. A Stop
   * pressed right after Send acts on that send: it waits for the server's answer (the turn has
   * started once it names it in `x-turn-id`), then interrupts, so that reply always stops.
   */
  async function stop(): Promise<void> {
    stopping.value++;
    try {
      await Promise.allSettled([...pendingStarts]);
      const [, interrupted] = await Promise.allSettled([
        stopLocalStream(),
        apiJson<{ turn: Turn | null }>(`${base}/interrupt`, { method: 'POST' }),
      ]);
      if (interrupted.status === 'rejected') notice.show(interrupted.reason);
      else if (interrupted.value.turn?.status === 'interrupted')
        transcript.markInterrupted(interrupted.value.turn.id);
    } finally {
      stopping.value--;
    }
    await detail.refresh();
  }

  /**
   * Send now / Stop & send on the queue head (Q9, S4): stop the local stream first, then the
   * server interrupts the active turn, waits for the lock, claims the head and streams it.
   */
  async function sendNow(turn: Turn): Promise<void> {
    notice.dismiss();
    const start = await startTurnStream({
      path: `${base}/queue/${encodeURIComponent(turn.id)}/send-now`,
      init: { method: 'POST' },
      after: stopLocalStream(),
      textOf: () => turn.text,
      beforeShow: (turnId) => queue.removeLocally(turnId),
      // Another tab claimed the head as the interrupt settled. The server gives the handoff to
      // whichever claim runs first after an interrupt; this tab follows it (the refetch attaches).
      quiet: ['not_eligible'],
    });
    if (start.kind === 'streaming') await start.ended;
    else await detail.refresh();
  }

  /** Viewer claim of the queue head (Q10). Losing the race to another tab is normal. */
  async function claimHead(head: Turn): Promise<void> {
    const version = queue.currentVersion();
    const start = await startTurnStream({
      path: `${base}/queue/claim`,
      init: { method: 'POST' },
      // The server claims its head, which may be newer than the one this tab saw.
      textOf: (turnId) => queue.items.value.find((item) => item.id === turnId)?.text ?? head.text,
      beforeShow: (turnId) => queue.removeLocally(turnId),
      // Another tab claimed first (this tab attaches to it), or the head is blocked.
      quiet: ['not_eligible'],
    });
    if (start.kind === 'streaming') await start.ended;
    else {
      claimRefusedAt = version;
      reconcile();
    }
  }

  /** Decides whether this tab should attach to a running turn or claim the head. */
  function reconcile(): void {
    // Until the first load, the transcript an attach would append to is not there yet.
    if (detail.loading.value || options.isDisposed() || detail.deleted.value) return;
    if (startsInFlight.value > 0 || stopping.value > 0) return;
    // A refetch is out: the transcript an attach appends to may be about to change (another
    // tab's edit sends thread.changed, then turn.started). Its end reconciles again.
    if (detail.isFetching()) return;
    const active = queue.activeTurn.value;
    // A turn waiting for an approval has no stream to follow, and blocks the queue (Q12). Once
    // decided it runs again under the same id: a stream this tab saw end is a new one then.
    if (active?.status === 'awaiting_approval') {
      finishedTurnIds.delete(active.id);
      return;
    }
    if (active) {
      if (transcript.streamingTurnId.value !== active.id && !finishedTurnIds.has(active.id)) attach(active);
      return;
    }
    const head = queue.head.value;
    if (
      options.attached.value &&
      claimRefusedAt !== queue.currentVersion() &&
      !isStreaming.value &&
      !queue.paused.value &&
      head?.status === 'queued' &&
      // Do not run the old text of a head someone is editing; claim once the edit ends.
      queue.editingTurnId.value !== head.id
    ) {
      void claimHead(head);
    }
  }

  return { isBusy, startTurnStream, send, stop, sendNow, reconcile };
}
