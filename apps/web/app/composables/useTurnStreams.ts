import type { Attachment, SendMode, Turn, TurnQueue } from '@chat/contracts';
import type { ThreadPageEffect } from '~/threadPage/effects';
import type { StartKind } from '~/threadPage/events';
import type { ChatUIMessage } from '~/utils/chatMessages';
import { sendUntilTaken } from '~/utils/overloadRetry';
import { readTurnStream } from '~/utils/turnStream';
import { refusalOf, type ThreadStore } from './useThreadStore';

/** How a send ended, from the composer's point of view. */
export type SendOutcome = 'accepted' | 'retryable' | 'refused';

/** A request the server may answer with a new turn's stream: a send, a claim, Stop & send, a retry, an edit. */
export interface TurnStart {
  kind: StartKind;
  path: string;
  init?: ApiRequestInit;
  /** Sent once this settles (a send waits for the send before it; Stop & send for the local stop). */
  after?: Promise<unknown>;
  /** The user message of the turn the server started (named by `x-turn-id`); null adds none. */
  userOf: (turnId: string) => { text: string; attachments: readonly Attachment[] } | null;
  /** An edit or regenerate: the messages kept before the new version's message. */
  keep?: readonly ChatUIMessage[];
  /** Offered on the banner when sending the same request again can help. */
  retry?: () => void;
  /** A viewer claim: the queue fact it was decided at. */
  claimAt?: number;
}

export type TurnStartOutcome =
  | { kind: 'streaming'; ended: Promise<void> }
  | { kind: 'queued' }
  | { kind: 'refused'; error: ApiRequestError };

/** What `POST /interrupt` answers; with items waiting the queue was paused too (S3). */
interface InterruptAnswer {
  turn: Turn | null;
  queuePaused?: boolean;
}

interface Reading {
  turnId: string;
  connection: AbortController;
  ended: Promise<void>;
}

/**
 * Turn streams in and out of this tab: every request that may start a turn, following a turn
 * started elsewhere, claiming the head, Stop and Stop & send. Each reports what happened to the
 * store as events; whether to attach or claim is the state's call (`effectsOf`), made here only
 * into requests. One stream is read at a time; starting another ends the one before.
 */
export function useTurnStreams(store: ThreadStore) {
  const { base, dispatch } = store;
  /** The stream being read now. */
  let reading: Reading | null = null;
  // Requests out that may start a turn, until their answer is in: Stop waits for them.
  const pendingStarts = new Set<Promise<unknown>>();
  /** Retries offered with notices, by notice id. */
  const retries = new Map<number, () => void>();
  /** Starts the server shed, waiting to go out again: Stop (or leaving the page) ends the wait. */
  const shedWaits = new Set<AbortController>();

  /**
   * Shows a turn's stream: the store is told first (the turn shows at once, and the state stops
   * asking for it), then the response is read into the reply.
   */
  function follow(
    turnId: string,
    kind: StartKind | 'attach',
    user: { text: string; attachments: readonly Attachment[] } | null,
    connection: AbortController,
    open: () => Promise<Response>,
    keep?: readonly ChatUIMessage[],
  ): Promise<void> {
    if (store.isDisposed()) {
      // The page went away while the request was out: end it rather than read it for nobody.
      connection.abort();
      return Promise.resolve();
    }
    if (reading && reading.turnId !== turnId) reading.connection.abort();
    dispatch({ type: 'stream.opened', turnId, kind, user, keep });
    const live = store.state.value.transcript.live;
    const continues = live?.turnId === turnId ? (live.reply ?? undefined) : undefined;
    const current: Reading = { turnId, connection, ended: Promise.resolve() };
    reading = current;
    current.ended = (async () => {
      let outcome: 'ended' | 'stopped' | 'gone' = 'ended';
      let error: string | undefined;
      try {
        const response = await open();
        if (response.status === 204 || !response.body) outcome = 'gone';
        else if (!response.ok) error = (await ApiRequestError.fromResponse(response)).message;
        else {
          ({ error } = await readTurnStream(response, {
            signal: connection.signal,
            continues,
            onSnapshot: (message) => dispatch({ type: 'stream.message', turnId, message }),
            onCompaction: (progress) => dispatch({ type: 'compaction.progress', turnId, progress }),
          }));
        }
      } catch (cause) {
        error = ApiRequestError.fromUnknown(cause).message;
      }
      if (connection.signal.aborted) outcome = 'stopped';
      if (reading === current) reading = null;
      dispatch({ type: 'stream.ended', turnId, outcome, error: outcome === 'stopped' ? undefined : error });
    })();
    return current.ended;
  }

  /**
   * Sends `request` and, when the server answers with a turn's stream, shows that turn. Resolves
   * once the server answered (the stream's end is `ended`).
   */
  function start(request: TurnStart): Promise<TurnStartOutcome> {
    const started = requestStart(request);
    pendingStarts.add(started);
    void started.finally(() => pendingStarts.delete(started));
    return started;
  }

  async function requestStart(request: TurnStart): Promise<TurnStartOutcome> {
    const { kind, claimAt } = request;
    dispatch({ type: 'start.requested', kind, claimAt });
    const connection = new AbortController();
    // A start the server is too busy to take (L1) is sent again by itself; the page says so.
    const shedWait = new AbortController();
    shedWaits.add(shedWait);
    let shed = false;
    const endShed = () => {
      shedWaits.delete(shedWait);
      if (shed) dispatch({ type: 'start.shedEnded', kind });
      shed = false;
    };
    let response: Response;
    try {
      await request.after;
      response = await sendUntilTaken(
        () => apiFetch(request.path, { ...request.init, signal: connection.signal }),
        {
          signal: shedWait.signal,
          onShed: () => {
            shed = true;
            dispatch({ type: 'start.shed', kind });
          },
        },
      );
    } catch (cause) {
      endShed();
      const error = ApiRequestError.fromUnknown(cause);
      dispatch({
        type: 'start.refused',
        kind,
        error: refusalOf(error),
        claimAt,
        retryOffered: !!request.retry,
      });
      const notice = store.state.value.notice;
      if (request.retry && notice?.retryable) retries.set(notice.id, request.retry);
      return { kind: 'refused', error };
    }
    endShed();
    if (response.status === 202) {
      let turnQueue: TurnQueue | null = null;
      if (kind === 'send') {
        try {
          turnQueue = ((await response.json()) as { turnQueue: TurnQueue }).turnQueue;
        } catch {
          // Queued all the same (the body was cut off); the queue.changed event brings the Dock up to date.
        }
      } else {
        void response.body?.cancel();
      }
      dispatch({ type: 'start.queued', kind, turnQueue });
      return { kind: 'queued' };
    }
    // Every turn stream the API answers names its turn (the API's turnStreamResponse).
    const turnId = response.headers.get('x-turn-id') as string;
    const ended = follow(
      turnId,
      kind,
      request.userOf(turnId),
      connection,
      async () => response,
      request.keep,
    );
    return { kind: 'streaming', ended };
  }

  /** Follows a turn this tab did not start: another tab's, or one running before a reload. */
  function attach(turn: Turn): void {
    const connection = new AbortController();
    const path = `${base}/turns/${encodeURIComponent(turn.id)}/stream`;
    void follow(turn.id, 'attach', { text: turn.text, attachments: turn.attachments }, connection, () =>
      fetch(path, { signal: connection.signal, credentials: 'same-origin' }),
    );
  }

  /** Viewer claim of the queue head (Q10). Losing the race to another tab is normal. */
  function claim(head: Turn, at: number): void {
    void start({
      kind: 'claim',
      path: `${base}/queue/claim`,
      init: { method: 'POST' },
      claimAt: at,
      // The server claims its head, which may be newer than the one this tab saw.
      userOf: (turnId) => {
        const turn = store.state.value.queue.items.find((item) => item.id === turnId) ?? head;
        return { text: turn.text, attachments: turn.attachments };
      },
    });
  }

  store.runTurnEffect = (effect: Extract<ThreadPageEffect, { type: 'attach' | 'claim' }>) => {
    if (effect.type === 'attach') attach(effect.turn);
    else claim(effect.head, effect.at);
  };

  // Sends go out one at a time: the queue is ordered by arrival, and two quick Enters must not
  // overtake each other on the way to the server.
  let previousSend: Promise<unknown> = Promise.resolve();

  /**
   * Sends a message. Idle thread: it is claimed at once and its reply streams here. Busy (or a
   * paused queue): it is queued (202) and shows in the Dock, never in the transcript. Resolves
   * once the server answered (not when a streamed reply ends).
   */
  function send(
    text: string,
    options: {
      clientRequestId?: string;
      mode?: SendMode;
      attachments?: readonly Attachment[];
      retry?: () => void;
    } = {},
  ): Promise<SendOutcome> {
    const { clientRequestId = crypto.randomUUID(), mode = 'queue', attachments = [] } = options;
    const attachmentIds = attachments.map((attachment) => attachment.id);
    const outcome = start({
      kind: 'send',
      path: `${base}/turns`,
      // A steer joins the running reply at its next step (202, `steer_pending`); idle, it is a send.
      init: {
        method: 'POST',
        json: {
          clientRequestId,
          text,
          ...(mode === 'steer' ? { mode } : {}),
          ...(attachmentIds.length > 0 ? { attachmentIds } : {}),
        },
      },
      after: previousSend,
      userOf: () => ({ text, attachments }),
      retry: options.retry ?? (() => void send(text, { ...options, clientRequestId })),
    }).then((started): SendOutcome => {
      if (started.kind !== 'refused') return 'accepted';
      return started.error.retryable ? 'retryable' : 'refused';
    });
    previousSend = outcome.catch(() => undefined);
    return outcome;
  }

  /** Ends the stream shown here on purpose (its end reads nothing; the caller decides what follows). */
  async function stopLocalStream(): Promise<void> {
    dispatch({ type: 'stop.started' });
    try {
      const current = reading;
      if (current) {
        current.connection.abort();
        await current.ended;
      }
    } finally {
      dispatch({ type: 'stop.ended', refetch: false });
    }
  }

  /**
   * Plain Stop (S1, S3): a server interrupt; the partial reply stays, the queue stays (and with
   * items waiting the server pauses it). A Stop pressed right after Send acts on that send: it
   * waits for the server's answer (the turn has started once it names it), then interrupts, so
   * that reply always stops.
   */
  async function stop(): Promise<void> {
    dispatch({ type: 'stop.started' });
    let interrupted: InterruptAnswer | undefined;
    let failure: unknown;
    try {
      // A send still waiting out the server's overload was never accepted: it goes back to the box.
      for (const wait of shedWaits) wait.abort();
      await Promise.allSettled([...pendingStarts]);
      const [, answer] = await Promise.allSettled([
        stopLocalStream(),
        apiJson<InterruptAnswer>(`${base}/interrupt`, { method: 'POST' }),
      ]);
      if (answer.status === 'rejected') failure = answer.reason;
      else interrupted = answer.value;
    } finally {
      dispatch({
        type: 'stop.ended',
        interrupted,
        error: failure === undefined ? undefined : refusalOf(failure),
        refetch: true,
      });
    }
  }

  /**
   * Send now / Stop & send on the queue head (Q9, S4): the local stream stops first, then the
   * server interrupts the active turn, waits for the lock, claims the head and streams it here.
   * `moveToHead`: another item is moved to the head first, in the same request ("Stop & send
   * this"); the server refuses it, changing nothing, when the item cannot run next.
   */
  async function sendNow(turn: Turn, options: { moveToHead?: boolean } = {}): Promise<void> {
    const started = await start({
      kind: 'sendNow',
      path: `${base}/queue/${encodeURIComponent(turn.id)}/send-now`,
      init: options.moveToHead ? { method: 'POST', json: { moveToHead: true } } : { method: 'POST' },
      after: stopLocalStream(),
      userOf: () => ({ text: turn.text, attachments: turn.attachments }),
    });
    if (started.kind === 'streaming') await started.ended;
  }

  /** Retry on a failed head (Q11): the same text runs again at once, in place of the attempt. */
  async function retryFailed(turn: Turn): Promise<void> {
    const started = await start({
      kind: 'retry',
      path: `${base}/queue/${encodeURIComponent(turn.id)}/retry`,
      init: { method: 'POST' },
      userOf: () => ({ text: turn.text, attachments: turn.attachments }),
    });
    if (started.kind === 'streaming') await started.ended;
  }

  /** The banner's Retry: the request that was refused, sent again. */
  function retryNotice(): void {
    const id = store.state.value.notice?.id;
    const retry = id === undefined ? undefined : retries.get(id);
    dispatch({ type: 'notice.dismissed' });
    retries.clear();
    retry?.();
  }

  onScopeDispose(() => {
    reading?.connection.abort();
    for (const wait of shedWaits) wait.abort();
  });

  return { start, send, stop, sendNow, retryFailed, retryNotice };
}

export type TurnStreams = ReturnType<typeof useTurnStreams>;
