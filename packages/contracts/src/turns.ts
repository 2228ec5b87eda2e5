import { z } from 'zod';
import { type Attachment, attachmentIds } from './attachments';
import type { NotEligibleReason } from './errors';
import { QUEUE_CAPACITY } from './limits';
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

/**
 * F4: what a refused Stop & send (`POST .../send-now`) says beside its error code when it had
 * already acted. Stop & send pauses the queue before it stops the reply (as a Stop would, S3), so
 * when it cannot go on (the database went away, `503 unavailable`; the reply did not settle in
 * time, `409 thread_busy`) the thread is left as after a Stop: `queuePaused` (the head waits,
 * paused) and, once the stop reached the reply, `replyStopped`. Send now on the head tries again.
 */
export interface StopAndSendLeftWaiting {
  queuePaused: true;
  replyStopped?: true;
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

/** What a change to one waiting item answers (edit, delete, move, merge): the item and the queue now. */
export interface QueueItemAnswer {
  turn: Turn;
  turnQueue: TurnQueue;
}

/**
 * `POST /api/threads/:id/queue/:turnId/move` (Q13): put a waiting item just before or just after
 * another one. Exactly one of the two names the neighbour; naming where it already is changes
 * nothing (a retry is harmless).
 */
export const moveQueuedTurnBody = z
  .object({ beforeTurnId: z.uuid().optional(), afterTurnId: z.uuid().optional() })
  .refine(
    (body) => (body.beforeTurnId === undefined) !== (body.afterTurnId === undefined),
    'Name exactly one of beforeTurnId and afterTurnId.',
  )
  .transform(
    (body): QueuePlace =>
      body.beforeTurnId !== undefined
        ? { beforeTurnId: body.beforeTurnId }
        : { afterTurnId: body.afterTurnId as string },
  );

/**
 * Which waiting items keep their place at the front of the queue (Q11, Q13): a failed head, then
 * the steers not yet delivered, in the order sent. They are never moved or merged and nothing is
 * moved ahead of them; the reason is the one a refusal carries (`409 not_eligible`). Null: the
 * item may be moved and merged, among the other such items. The API sorts and refuses by this;
 * the Dock offers moves by it.
 */
export function fixedPlaceOf(turn: Pick<Turn, 'status' | 'steer'>): NotEligibleReason | null {
  if (turn.status === 'failed') return 'head_failed';
  if (turn.steer) return 'steer_first';
  return null;
}

/** Where a move puts the item: just before one neighbour, or just after one (the move's body). */
export type QueuePlace = { beforeTurnId: string } | { afterTurnId: string };

/**
 * `POST /api/threads/:id/queue/merge` (Q14): two or more waiting items become one at the place of
 * the first, their texts in queue order. Idempotent by `clientRequestId`, like a send.
 */
export const mergeQueuedTurnsBody = z.object({
  clientRequestId: z.string().min(1).max(200),
  turnIds: z
    .array(z.uuid())
    .min(2)
    .max(QUEUE_CAPACITY)
    .refine((ids) => new Set(ids).size === ids.length, 'Each item may be named once.'),
});
export type MergeQueuedTurnsBody = z.infer<typeof mergeQueuedTurnsBody>;

/** What joins the texts of merged items: a blank line, so each stays its own paragraph. */
export const MERGED_TEXT_SEPARATOR = '\n\n';

/**
 * `POST /api/threads/:id/queue/:turnId/send-now`: Send now / Stop & send on the head (Q9, S4).
 * `moveToHead: true` moves the item to the head first, in the same request (the Dock's
 * "Stop & send this"); without it an item that is not the head is refused (`not_queue_head`).
 */
export const sendNowBody = z.object({ moveToHead: z.boolean().optional() });
export type SendNowBody = z.infer<typeof sendNowBody>;
