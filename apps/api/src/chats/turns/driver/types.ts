import type { BranchRow, TurnRow } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import type { Segment } from './mastra/modelCall';

/**
 * The runtime driver seam: the one interface the turn runner talks to for a model/agent call. A
 * driver owns how a turn is produced (here: a Mastra agent run); the runner owns the turn's row,
 * its stream to subscribers and its settlement. Drivers are interchangeable behind this shape.
 */

/** A message the person added while a reply runs (a steer), as a driver delivers it. */
export interface SteerMessage {
  /** The steer's own turn row. */
  turnId: string;
  /** The id its user message gets in the transcript. */
  messageId: string;
  text: string;
}

export type DriverEvent =
  /** A piece of the reply, in the AI SDK UI message stream shape. */
  | { type: 'chunk'; chunk: UIMessageChunk }
  /**
   * Steers were taken into the running reply at a step boundary: what came before is one finished
   * assistant message, the steers follow it, and the continuation streams as `continuationMessageId`.
   */
  | { type: 'steer-boundary'; steers: SteerMessage[]; continuationMessageId: string }
  /** Steers handed to `redirect` that the turn ended before taking in (the host queues them). */
  | { type: 'steer-undelivered'; steers: SteerMessage[] }
  /** Opaque to the host: what a later connection resumes from (stored on the turn's final reply). */
  | { type: 'resume-token'; token: string }
  /** The run ended; `replyMessageId`: the id its last reply message is stored under. */
  | { type: 'turn-complete'; replyMessageId: string | undefined }
  | { type: 'error'; message: string };

/** Everything a driver needs to produce one run of a turn; the runner checks it is all there. */
export interface DriverTurn {
  turn: TurnRow;
  branch: BranchRow;
  ownerId: string;
  userMessageId: string;
  /** The id the agent run gets (reserved by the host; Mastra's run id, the resume token). */
  runId: string;
  segment: Segment;
  abortSignal: AbortSignal;
}

/** One run of a turn on a driver. */
export interface RuntimeConnection {
  events: AsyncIterable<DriverEvent>;
  /**
   * Delivers steers into the running turn at its next step boundary. Absent when the driver cannot
   * steer: the host then queues steers as ordinary turns (with the steer reminder).
   */
  redirect?(steers: SteerMessage[]): void;
  close(): void;
}

export interface RuntimeDriver {
  send(turn: DriverTurn): Promise<RuntimeConnection>;
}
