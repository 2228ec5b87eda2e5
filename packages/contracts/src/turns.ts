import { z } from 'zod';
import { type Attachment, attachmentIds } from './attachments';
import type { TurnStatus } from './turnLifecycle';

/** The length of `text` in characters (code points): an emoji counts once, like a letter. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export interface Turn {
  id: string;
  threadId: string;
  branchId: string;
  status: TurnStatus;
  text: string;
  clientRequestId: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
  /** Sent as a steer: `steer_pending` until delivered, or queued at the head when the reply ended first. */
  steer: boolean;
  /** The images the message carries (shown as thumbnails while it waits in the queue). */
  attachments: Attachment[];
}

/** The data part that marks a steer boundary in a reply stream (see SteerBoundaryData). */
export const STEER_BOUNDARY_PART = 'data-steer-boundary';

/**
 * The `data-steer-boundary` part of a reply stream: the running reply received these steers; what
 * streamed before it is one finished assistant message, the steers follow as user messages, and
 * what streams after is the continuation (a new assistant message, `continuationMessageId`).
 */
export interface SteerBoundaryData {
  steers: { turnId: string; messageId: string; text: string }[];
  continuationMessageId: string;
}

export interface TurnQueue {
  /** The turn holding the thread's one active slot: `running`, or `awaiting_approval`. */
  activeTurn: Turn | null;
  /**
   * Queued turns in the order they will run; a failed head (Q11) stays first until resolved.
   * Pending steers (`steer_pending`) come first: they join the running reply at its next step.
   */
  items: Turn[];
  /** The owner paused the queue: nothing is claimed (sends are queued) until it is resumed. */
  paused: boolean;
}

/**
 * `POST /api/threads/:id/interrupt`: the settled turn (null when nothing ran). With items waiting
 * Stop also pauses the queue (S3: kept, never cancelled) and says so; Resume, Send now or
 * Stop & send on the head end the pause.
 */
export interface InterruptAnswer {
  turn: Turn | null;
  queuePaused?: true;
}

/** `PUT /api/threads/:id/queue/paused`: pause or resume the queue. */
export const setQueuePausedBody = z.object({ paused: z.boolean() });
export type SetQueuePausedBody = z.infer<typeof setQueuePausedBody>;

/** Message text. The API trims it, then requires 1 to 32,000 characters, counted as code points (400 / 413 otherwise). */
export const messageText = z.string();

/**
 * How a send joins a thread that is busy: `queue` (default) runs it after the running reply;
 * `steer` folds it into the running reply at its next step boundary (an ordinary send when idle).
 */
export const sendModes = ['queue', 'steer'] as const;
export type SendMode = (typeof sendModes)[number];

export const sendTurnBody = z.object({
  clientRequestId: z.string().min(1).max(200),
  text: messageText,
  mode: z.enum(sendModes).default('queue'),
  /** Uploads of this thread (`POST /api/threads/:id/attachments`) the message carries. */
  attachmentIds: attachmentIds.optional(),
});
export type SendTurnBody = z.infer<typeof sendTurnBody>;

/** `attachmentIds`: the images it carries from now on; left out, it keeps the ones it has. */
export const editQueuedTurnBody = z.object({ text: messageText, attachmentIds: attachmentIds.optional() });
export type EditQueuedTurnBody = z.infer<typeof editQueuedTurnBody>;
