import type {
  Attachment,
  CompactAnswer,
  CompactionProgress,
  DrainMode,
  HitlRequest,
  MessageFeedback,
  Thread,
  ThreadDetail,
  ThreadEvent,
  ToolMode,
  Turn,
  TurnQueue,
} from '@chat/contracts';
import type { ChatUIMessage } from '../utils/chatMessages';
import type { QueueMove } from './queueOrder';
import type { Refusal } from './state';

/**
 * What goes into the chat page's reducer: facts from the server (a detail, a thread event, a
 * stream's chunks and end, the answer to a request) and what the person started or ended in this
 * tab. Each event says what happened, never what to do next: that is decided from the state.
 */
export type ThreadPageEvent =
  // --- reading the thread -------------------------------------------------------------------
  /** A detail read went out (its number is the state's `detail.latest` afterwards). */
  | { type: 'detail.requested' }
  /**
   * A detail arrived: from a read, or as the answer to a version switch or delete. `at` is the
   * state's `facts` when it was requested, so a detail older than a newer fact does not undo it.
   */
  | { type: 'detail.answered'; request: number; at: Facts; detail: ThreadDetail }
  /** `ofThread`: the read of the thread itself failed (a 404 then means it is gone). */
  | { type: 'detail.failed'; request: number; error: Refusal; ofThread: boolean }
  /** The first load failed in a way that waiting can fix; a retry is scheduled, then due. */
  | { type: 'load.retryScheduled' }
  | { type: 'load.retryDue' }
  // --- the thread's events stream -----------------------------------------------------------
  | { type: 'events.connected' }
  | { type: 'events.disconnected' }
  | { type: 'server'; event: ThreadEvent }
  // --- turns this tab starts ----------------------------------------------------------------
  /** A request that may start a turn went out. `claimAt`: a viewer claim, at this queue fact. */
  | { type: 'start.requested'; kind: StartKind; claimAt?: number }
  /** The server queued it (`202`); a send's answer carries the queue. */
  | { type: 'start.queued'; kind: StartKind; turnQueue: TurnQueue | null }
  /**
   * The server was too busy to take it (`503 overloaded`, nothing recorded): this tab sends it
   * again by itself after a pause (L1). Once per start, however many attempts it takes.
   */
  | { type: 'start.shed'; kind: StartKind }
  /** A shed start was taken at last, refused otherwise, or given up: its answer follows. */
  | { type: 'start.shedEnded'; kind: StartKind }
  /** `retryOffered`: the banner may offer to send it again (when that can help). */
  | { type: 'start.refused'; kind: StartKind; error: Refusal; claimAt?: number; retryOffered?: boolean }
  /**
   * A turn's stream is about to be shown here: one of this tab's starts (`start`), or an attach
   * to a turn started elsewhere. The user message is shown with it unless the transcript has it.
   */
  | {
      type: 'stream.opened';
      turnId: string;
      kind: StartKind | 'attach';
      user: { text: string; attachments: readonly Attachment[] } | null;
      /** An edit or regenerate: the messages kept before the new version's message. */
      keep?: readonly ChatUIMessage[];
    }
  /** The reply as it stands after the latest chunks. */
  | { type: 'stream.message'; turnId: string; message: ChatUIMessage }
  | { type: 'stream.ended'; turnId: string; outcome: StreamOutcome; error?: string }
  /** A stream ended and its settle event is late: a timer runs, and then it is given up on. */
  | { type: 'settleWait.started'; turnId: string }
  | { type: 'settleWait.expired'; turnId: string }
  // --- Stop, Stop & send --------------------------------------------------------------------
  /** This tab is ending the shown stream on purpose (Stop, or Stop & send before it sends). */
  | { type: 'stop.started' }
  /** Stop's end: the interrupt's answer (or why it failed). `refetch`: the thread is read again. */
  | {
      type: 'stop.ended';
      interrupted?: { turn: Turn | null; queuePaused?: boolean };
      error?: Refusal;
      refetch: boolean;
    }
  // --- the queue ----------------------------------------------------------------------------
  /** An edit, delete, pause or resume answered with the queue. */
  | { type: 'queue.answered'; turnQueue: TurnQueue }
  /** A failed head was edited or deleted: its attempt left the transcript (read it again). */
  | { type: 'queue.attemptRemoved' }
  | { type: 'queueEdit.started'; turnId: string }
  | { type: 'queueEdit.ended' }
  /** A move of a Dock item went out (drag, Alt+Up/Down, Run next, an undo); shown at once (Q13). */
  | { type: 'queueMove.requested'; move: QueueMove }
  /** The server answered the oldest move out: with the queue after it, or with a refusal. */
  | { type: 'queueMove.answered'; turnQueue: TurnQueue }
  | { type: 'queueMove.refused'; error: Refusal }
  /** Picking items to merge (Q14): it starts with one item, items are toggled, it ends. */
  | { type: 'queueSelection.started'; turnId: string }
  | { type: 'queueSelection.toggled'; turnId: string }
  | { type: 'queueSelection.ended' }
  /** The merge of the picked items went out, and its answer: the queue with the one new item, or a refusal. */
  | { type: 'queueMerge.requested' }
  | { type: 'queueMerge.answered'; turnQueue: TurnQueue }
  | { type: 'queueMerge.refused'; error: Refusal }
  // --- versions -----------------------------------------------------------------------------
  | { type: 'messageEdit.started'; messageId: string }
  | { type: 'messageEdit.ended' }
  | { type: 'versionChange.started' }
  | { type: 'versionChange.ended' }
  // --- approvals, feedback, the banner, the sidebar -----------------------------------------
  | { type: 'decision.started'; requestId: string }
  | { type: 'decision.shown'; requestId: string; status: HitlRequest['status'] }
  | { type: 'decision.ended' }
  | { type: 'feedback.shown'; messageId: string; feedback: MessageFeedback | null }
  | { type: 'notice.shown'; error: Refusal; prefix?: string }
  | { type: 'notice.dismissed' }
  | { type: 'threadList.refreshed' }
  // --- who runs the queue, and hearing about it (Q15) ----------------------------------------
  /** The Dock's switch asked for a drain mode; the server's answer (the thread) or its refusal. */
  | { type: 'drainMode.requested'; mode: DrainMode }
  | { type: 'drainMode.answered'; thread: Thread }
  | { type: 'drainMode.refused'; error: Refusal }
  // --- the chat's model and instructions (M2, M4) --------------------------------------------
  /** The picker or the instructions dialog changed the chat: the server's answer, or its refusal. */
  | { type: 'chatSettings.answered'; thread: Thread }
  | { type: 'chatSettings.refused'; error: Refusal }
  // --- the chat's tool settings (T1) ---------------------------------------------------------
  /** The panel asked for a tool's mode; the server took it (the detail is read again) or refused. */
  | { type: 'toolMode.requested'; name: string; mode: ToolMode }
  | { type: 'toolMode.answered'; name: string }
  | { type: 'toolMode.refused'; name: string; error: Refusal }
  /**
   * The panel was opened: the detail is read again, so MCP servers that came or went since the
   * page's last read show as they are now (T3); nothing else tells the page of them.
   */
  | { type: 'toolPanel.opened' }
  /** The page became visible or hidden. */
  | { type: 'page.visibility'; visible: boolean }
  /**
   * What this browser remembers of the person's last visit, before the first load: the last reply
   * they saw (null: none yet, the chat had no reply).
   */
  | { type: 'seen.restored'; replyId: string | null }
  /** A notification of the list went out (or was not allowed): it is off the list. */
  | { type: 'notification.shown'; id: number }
  // --- the model's context (C2, C3) --------------------------------------------------------
  /** A turn's stream said how the compaction before its reply goes. */
  | { type: 'compaction.progress'; turnId: string; progress: CompactionProgress }
  /** Compact now went out, and its answer: the new meter (and marker), or a refusal. */
  | { type: 'compactNow.requested' }
  | { type: 'compactNow.answered'; answer: CompactAnswer }
  | { type: 'compactNow.refused'; error: Refusal };

export interface Facts {
  queue: number;
  transcript: number;
}

/** Which request a turn start is: each has its own rules for a refusal and for what it shows. */
export type StartKind =
  /** `POST /turns` (Q1-Q3). */
  | 'send'
  /** A viewer claim of the queue head (Q10). */
  | 'claim'
  /** Send now / Stop & send on the head (Q9, S4). */
  | 'sendNow'
  /** Retry on a failed head (Q11). */
  | 'retry'
  /** Edit into a new version, or regenerate (B1, M3). */
  | 'version'
  /** Approve or deny a tool call (H3): the reply continues. */
  | 'decision';

export type StreamOutcome =
  /** The server ended it (a finished, failed or interrupted reply). */
  | 'ended'
  /** This tab ended it on purpose (Stop, Stop & send, another stream, the page closing). */
  | 'stopped'
  /** The turn had already finished when this tab attached (`204`). */
  | 'gone';
