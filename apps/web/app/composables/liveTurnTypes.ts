import type { Attachment, ErrorCode } from '@chat/contracts';
import type { useThreadDetail } from './useThreadDetail';
import type { useThreadNotice } from './useThreadNotice';
import type { useTranscript } from './useTranscript';
import type { useTurnQueue } from './useTurnQueue';

/** The shapes `useLiveTurn` takes and answers with. */

/** How a send ended, from the composer's point of view. */
export type SendOutcome = 'accepted' | 'retryable' | 'refused';

/** A request the server may answer with a new turn's stream: a send, a claim, a send-now, an edit. */
export interface TurnStreamRequest {
  path: string;
  init?: ApiRequestInit;
  /** Sent once this settles; this tab counts as starting a turn from the call on. */
  after?: Promise<unknown>;
  /** The user message of the turn the server started (named by `x-turn-id`). */
  textOf: (turnId: string) => string;
  /** Its images (a send's own; a queued turn's are found in the queue). */
  attachments?: readonly Attachment[];
  /** Runs just before the stream is shown (take the turn off the Dock, cut the transcript). */
  beforeShow?: (turnId: string) => void;
  /** The answer was `202`: the turn was queued instead. Still counted as starting meanwhile. */
  onQueued?: (response: Response) => Promise<void> | void;
  /** Offered on the notice when sending the same request again can help. */
  retry?: () => void;
  /** Said before the refusal's own words on the notice. */
  refusalPrefix?: string;
  /** Refusals that are part of the normal flow and get no notice (a lost claim race). */
  quiet?: ErrorCode[];
  /** The stream continues a turn the transcript already shows (after an approval decision). */
  continues?: boolean;
}

export type TurnStreamStart =
  | { kind: 'streaming'; ended: Promise<void> }
  | { kind: 'queued' }
  | { kind: 'refused'; error: ApiRequestError };

export interface LiveTurnOptions {
  /** The thread's events stream is open: this page is attached and may claim the head (Q10). */
  attached: Readonly<Ref<boolean>>;
  transcript: ReturnType<typeof useTranscript>;
  queue: ReturnType<typeof useTurnQueue>;
  detail: ReturnType<typeof useThreadDetail>;
  notice: ReturnType<typeof useThreadNotice>;
  isDisposed: () => boolean;
  refreshThreadList: () => Promise<void>;
  /** The tool calls of a turn that waited for approvals: a stream of it continues that reply. */
  toolCallIdsOf: (turnId: string) => readonly string[];
  /**
   * After a turn's stream ended on its own: brings the transcript in line with the server (the
   * turn's settle event, or a detail read when that cannot be applied).
   */
  afterTurnStream: (turnId: string) => Promise<void>;
}
