import type {
  CompactionProgress,
  ContextState,
  DrainMode,
  HitlRequest,
  Note,
  StopAndSendLeftWaiting,
  Thread,
  ThreadEvent,
  ToolMode,
  ToolServer,
  ToolSetting,
  TurnQueue,
} from '@chat/contracts';
import type { ChatUIMessage } from '../utils/chatMessages';
import type { QueueMove } from './queueOrder';

/**
 * The chat page's state: everything the page shows and everything that decides what it does
 * next, in one plain value. Server facts and this tab's requests come in as events
 * (`events.ts`); `reduceThreadPage` (`reducer.ts`) makes the next state; `effectsOf`
 * (`effects.ts`) reads the state and says which requests should go out. Nothing here holds a
 * function, a timer or a connection: those live in the store that runs the effects.
 */
export interface ThreadPageState {
  threadId: string;
  /** The first load of the thread: until it answers, nothing claims, attaches or shows. */
  load: { phase: 'loading' | 'ready' | 'failed'; error: Refusal | null; retryScheduled: boolean };
  /** The thread was deleted (here or in another tab). */
  deleted: boolean;
  thread: Thread | null;
  /** The queue as the server last told us (Q6): the active turn, the waiting items, the pause. */
  queue: TurnQueue;
  /** Tool approvals (H3) and the notes they wrote. */
  hitl: readonly HitlRequest[];
  notes: readonly Note[];
  /** The chat's tool settings (T1) as the server last told us. */
  tools: readonly ToolSetting[];
  /** T3: the configured MCP servers and whether their tools are offered now. */
  toolServers: readonly ToolServer[];
  /** Modes this tab asked for and the server has not answered yet, by tool (shown at once). */
  toolsWanted: Readonly<Record<string, ToolMode>>;
  transcript: Transcript;
  /** The thread's events stream is open: this page is attached and may claim the head (Q10). */
  attached: boolean;
  /**
   * Counters of the facts that changed without a detail read. A detail requested before a newer
   * fact holds an older copy of it, and that part of the detail is not shown.
   */
  facts: { queue: number; transcript: number };
  /**
   * A detail read's transcript was newer than the one shown but could not be shown, because a
   * stream was (it would have dropped the live reply): the thread is read again after the stream.
   */
  transcriptBehind: boolean;
  /** Detail reads: one is wanted (an effect sends it), how many are out, the newest one's number. */
  detail: { wanted: boolean; inFlight: number; latest: number };
  /** Requests out that may start a turn in this tab (send, claim, Stop & send, retry, edit, decision). */
  starts: number;
  /** Of `starts`, those the server shed (`503 overloaded`) and this tab is sending again (L1). */
  shed: number;
  /** Stop or Stop & send is ending the shown stream on purpose. */
  stopping: number;
  /** Turns this tab showed to their end or stopped: never attached to again (newest last). */
  finished: readonly string[];
  /**
   * Turns this tab heard settle for good (completed, interrupted, cancelled: they never run
   * again), newest last. A queue that still shows one of them active was read before that settle
   * and reached this tab after it (a send's answer overtaken by the settle event): it is not applied.
   */
  endedTurns: readonly string[];
  /** The queue fact a claim of this tab was refused at: no new claim until the queue changes. */
  claimRefusedAt: number | null;
  /** Settle events that came while their turn's stream was still shown here. */
  earlySettles: Readonly<Record<string, SettledEvent>>;
  /** A stream ended on its own and waits (briefly) for its turn's settle event. */
  settleWait: { turnId: string; timerStarted: boolean } | null;
  /** The reply message id each turn streamed here produced (to mark it interrupted later). */
  replyIds: Readonly<Record<string, string>>;
  /**
   * Moves of Dock items this tab sent and the server has not answered yet (Q13), in the order
   * sent: the Dock shows them at once, over the server's order (`shownQueueItems`).
   */
  moves: readonly QueueMove[];
  /** The Dock items picked to merge (Q14); null when the Dock is not picking. */
  selection: readonly string[] | null;
  /** A merge of the picked items is on its way. */
  merging: boolean;
  /** What the person is editing in place: a queued item (Q8) or a transcript message (B1). */
  editing: { queuedTurnId: string | null; messageId: string | null };
  /** Version changes (edit, regenerate, switch, delete) waiting for their answer. */
  versionChanges: number;
  /** The approval request whose decision is on its way. */
  deciding: string | null;
  /** The error banner: a refusal of this tab's last request. */
  notice: Notice | null;
  /** How many notices were shown (numbers the next one). */
  noticesShown: number;
  /** The error the last stream ended with (shown unless the Dock shows it on a failed head). */
  streamError: { turnId: string; message: string } | null;
  /** The last reply that finished streaming here, for the live region. */
  lastFinished: FinishedReply | null;
  /** The sidebar's list may show an old title or order: an effect refetches it. */
  threadListStale: boolean;
  /**
   * Who runs the queue as this tab asked (Q15) while the server has not answered: the Dock's
   * switch shows it at once. Null when nothing is on its way.
   */
  drainModeWanted: DrainMode | null;
  /** Whether the person sees the page, and what finished while they did not (Q15). */
  away: AwayState;
  /** The context meter of the shown version (C2) and where the model's view of it starts (C3). */
  context: ContextState | null;
  /**
   * A compaction running or just ended (C3): in a turn (`turnId`) or from Compact now (null). It
   * shows by the meter until the turn settles (or Compact now answers).
   */
  compaction: { turnId: string | null; progress: CompactionProgress } | null;
}

export interface AwayState {
  /** The page is visible. */
  visible: boolean;
  /**
   * The last reply the person saw: remembered by this browser from their last visit, or the latest
   * reply when the page was hidden. Null: they saw the chat before it had a reply; undefined: this
   * browser never showed the chat.
   */
  seenReplyId: string | null | undefined;
  /** Replies that finished while the page was hidden (the tab's title counts them). */
  unseen: number;
  /**
   * The "While you were away" divider, after the reply the person last saw (null: above the first
   * reply), so it goes above the first one they have not seen whatever reads come later. Null: none.
   */
  divider: { after: string | null } | null;
  /** Notifications due, oldest first: the store shows each (when allowed) and reports it. */
  notifications: readonly AwayNotification[];
  /** Numbers notifications. */
  notificationSeq: number;
}

export interface AwayNotification {
  id: number;
  kind: 'replyFinished' | 'replyFailed' | 'queueEmpty' | 'approvalNeeded';
  /** The reply's first sentence (empty for `queueEmpty`; the tool's name for `approvalNeeded`). */
  text: string;
}

export type SettledEvent = Extract<ThreadEvent, { type: 'turn.settled' }>;

/** A refusal or failure of a request, as plain data (see ApiRequestError). */
export interface Refusal {
  message: string;
  /** HTTP status; 0 when no answer came. */
  status: number;
  code: string | null;
  /** Sending the same request again can help (the server never refused it). */
  retryable: boolean;
  /** A Stop & send that could not start the head had already paused the queue (and stopped the reply): F4. */
  leftWaiting?: StopAndSendLeftWaiting;
}

export interface Notice {
  /** Numbers notices, so a retry offered with one is not taken for another's. */
  id: number;
  message: string;
  /** The banner offers Retry: the request can be sent again, and sending it again can help. */
  retryable: boolean;
}

export type StreamOrigin =
  /** A turn this tab started (send, claim, Stop & send, retry, edit, regenerate). */
  | 'own'
  /** Following a turn started elsewhere (another tab, before a reload). */
  | 'attached'
  /** The reply that continues after an approval decided here. */
  | 'continued';

/**
 * The transcript: the shown version's messages, and the one reply streaming into this tab now.
 * The streaming reply is kept apart, so a streamed delta replaces one message and never copies or
 * scans the whole transcript (a chat of thousands of messages streams as cheaply as a short one).
 */
export interface Transcript {
  messages: readonly ChatUIMessage[];
  live: LiveReply | null;
}

export interface LiveReply {
  turnId: string;
  origin: StreamOrigin;
  /** The reply so far: null until its first chunk (a continued reply starts as the message it continues). */
  reply: ChatUIMessage | null;
}

export interface FinishedReply {
  /** Counts finished replies, so the same text twice is still news. */
  seq: number;
  turnId: string;
  text: string;
  failed: boolean;
}

export function initialThreadPageState(threadId: string): ThreadPageState {
  return {
    threadId,
    load: { phase: 'loading', error: null, retryScheduled: false },
    deleted: false,
    thread: null,
    queue: { activeTurn: null, items: [], paused: false },
    hitl: [],
    notes: [],
    tools: [],
    toolServers: [],
    toolsWanted: {},
    transcript: { messages: [], live: null },
    attached: false,
    facts: { queue: 0, transcript: 0 },
    // The first load is the first detail read.
    transcriptBehind: false,
    detail: { wanted: true, inFlight: 0, latest: 0 },
    starts: 0,
    shed: 0,
    stopping: 0,
    finished: [],
    endedTurns: [],
    claimRefusedAt: null,
    earlySettles: {},
    settleWait: null,
    replyIds: {},
    moves: [],
    selection: null,
    merging: false,
    editing: { queuedTurnId: null, messageId: null },
    versionChanges: 0,
    deciding: null,
    notice: null,
    noticesShown: 0,
    streamError: null,
    lastFinished: null,
    threadListStale: false,
    drainModeWanted: null,
    away: {
      visible: true,
      seenReplyId: undefined,
      unseen: 0,
      divider: null,
      notifications: [],
      notificationSeq: 0,
    },
    context: null,
    compaction: null,
  };
}
