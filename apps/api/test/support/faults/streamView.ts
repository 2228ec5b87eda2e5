import { iterateChunks, type StreamChunk } from '../client';

/** One reply message as the client saw it arrive. */
export interface SeenMessage {
  id: string;
  /** Each text delta with the time it arrived (`Date.now()` of the test process). */
  deltas: { at: number; text: string }[];
  /** Tool calls whose result arrived, with the time it did. */
  toolResults: { at: number; toolCallId: string }[];
}

/**
 * What a client saw of one reply stream (a send, a claim, an approval's continuation), recorded
 * chunk by chunk as it arrives, with arrival times: the fault suite holds the server to it. The
 * stream is read in the background until it ends, fails (the API was killed) or is abandoned.
 */
export class StreamView {
  readonly messages: SeenMessage[] = [];
  /** When each step of the reply ended (`finish-step`): what came before is a finished step. */
  readonly stepEnds: number[] = [];
  /** Steer boundaries: the steers the reply took in, and when the client learned of it. */
  readonly boundaries: { at: number; steerTurnIds: string[] }[] = [];
  /** The stream ended with `finish` (how: interrupted or not). */
  finish: { at: number; interrupted: boolean } | undefined;
  /** The stream ended with an approval request (`tool-approval-request`). */
  approvalRequested = false;
  /** Error chunks the stream carried. */
  readonly errors: string[] = [];
  /** The connection broke before the stream ended (the API process died). */
  brokenAt: number | undefined;
  /** When the client got the response (its headers). */
  readonly startedAt = Date.now();
  /** Resolves once the stream has ended one way or another; never rejects. */
  readonly done: Promise<void>;
  /** The stream has ended (finished, failed or broken). */
  ended = false;
  private current: SeenMessage | undefined;

  constructor(
    readonly turnId: string,
    response: Response,
  ) {
    this.done = this.read(response);
  }

  /** The reply's text in order, every message's deltas received before `before` (all by default). */
  textSeen(before = Number.POSITIVE_INFINITY): string[] {
    return this.messages.map((message) =>
      message.deltas
        .filter((delta) => delta.at < before)
        .map((delta) => delta.text)
        .join(''),
    );
  }

  /** Tool calls whose result the client had received before `before`. */
  toolResultsSeen(before = Number.POSITIVE_INFINITY): string[] {
    return this.messages.flatMap((message) =>
      message.toolResults.filter((result) => result.at < before).map((result) => result.toolCallId),
    );
  }

  /** The last step end the client had seen before `before` (0 when none). */
  lastStepEndBefore(before: number): number {
    return this.stepEnds.filter((at) => at < before).at(-1) ?? 0;
  }

  get wordCount(): number {
    return this.textSeen().join(' ').trim().split(/\s+/).filter(Boolean).length;
  }

  private async read(response: Response): Promise<void> {
    try {
      for await (const chunk of iterateChunks(response)) this.take(chunk, Date.now());
    } catch {
      this.brokenAt = Date.now();
    } finally {
      this.ended = true;
    }
  }

  private take(chunk: StreamChunk, at: number): void {
    switch (chunk.type) {
      case 'start':
        if (typeof chunk.messageId === 'string') this.open(chunk.messageId);
        break;
      case 'text-delta':
        this.message().deltas.push({ at, text: String(chunk.delta) });
        break;
      case 'tool-output-available':
        this.message().toolResults.push({ at, toolCallId: String(chunk.toolCallId) });
        break;
      case 'finish-step':
        this.stepEnds.push(at);
        break;
      case 'data-steer-boundary': {
        const data = chunk.data as { steers: { turnId: string }[]; continuationMessageId: string };
        this.boundaries.push({ at, steerTurnIds: data.steers.map((steer) => steer.turnId) });
        // What came before is a finished message of its own: a step ended with it.
        this.stepEnds.push(at);
        this.open(data.continuationMessageId);
        break;
      }
      case 'tool-approval-request':
        this.approvalRequested = true;
        break;
      case 'error':
        this.errors.push(String(chunk.errorText));
        break;
      case 'finish':
        this.finish = {
          at,
          interrupted: (chunk.messageMetadata as { interrupted?: boolean } | undefined)?.interrupted === true,
        };
        break;
    }
  }

  private open(id: string): void {
    if (this.current?.id === id) return;
    this.current = this.messages.find((message) => message.id === id);
    if (this.current) return;
    this.current = { id, deltas: [], toolResults: [] };
    this.messages.push(this.current);
  }

  private message(): SeenMessage {
    // A continued reply (after an approval) may send text before any `start`: it is one message.
    if (!this.current) this.open('(unnamed)');
    return this.current as SeenMessage;
  }
}
