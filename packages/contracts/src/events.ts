import type { ContextState } from './context';
import type { MessageFeedback } from './feedback';
import type { HitlRequest } from './hitl';
import type { ChatMessage } from './threads';
import type { Turn, TurnQueue } from './turns';

/**
 * Thread events sent over `GET /api/threads/:id/events` (SSE, one JSON object per `data:` line).
 * Every open tab follows these; the viewer claims the queue head on `turn.settled`.
 */
export type ThreadEvent =
  | { type: 'turn.started'; threadId: string; turn: Turn; turnQueue: TurnQueue }
  /**
   * `messages`: the turn's final messages (its user message and reply, as the thread detail shows
   * them), for a tab to put in place of its copy of the turn instead of reading the whole detail.
   * Absent when a tab cannot apply them on their own (nothing stored, or the first turn of an
   * edited version): then it reads the detail.
   */
  | {
      type: 'turn.settled';
      threadId: string;
      turn: Turn;
      turnQueue: TurnQueue;
      messages?: ChatMessage[];
      /** The context meter after the turn (C2); absent when it could not be read. */
      context?: ContextState;
    }
  /** A compaction changed where the model's view of a branch starts (C3): tabs read the detail. */
  | { type: 'context.changed'; threadId: string }
  | { type: 'queue.changed'; threadId: string; turnQueue: TurnQueue }
  /** A tool approval was requested, decided or cancelled (H3). */
  | { type: 'hitl.changed'; threadId: string; hitl: HitlRequest[]; turnQueue: TurnQueue }
  | { type: 'thread.changed'; threadId: string }
  /** The owner's feedback on a message changed; `null` when it was cleared. */
  | { type: 'feedback.changed'; threadId: string; messageId: string; feedback: MessageFeedback | null }
  | { type: 'thread.deleted'; threadId: string };
