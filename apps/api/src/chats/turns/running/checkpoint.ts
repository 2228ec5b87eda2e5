import type { Database } from '@chat/db';
import type { Logger } from '../../../platform/logger';
import type { ReplyRecord } from '../replyRecord';
import { checkpointRunningTurn, renewLease } from './repository';
import type { TextAppends } from './textAppends';

/** While the database refuses checkpoints, the next try waits this long. */
const RETRY_MS = 500;

export interface CheckpointDeps {
  db: Database;
  runnerId: string;
  leaseMs: number;
  logger: Logger;
  /** Where the text appends of this runner's replies are written together. */
  appends: TextAppends;
}

/**
 * The checkpoints of one running turn and its lease, kept apart. The text of the message streaming
 * now is written behind the stream (write-behind): a write starts as soon as text grew and no
 * write is in flight, and when one completes and more text came meanwhile, the next starts at
 * once with all of it (only the new text is sent). So at most one text write is in flight, and
 * what the row lacks of the stream is what streamed while that one write was under way: no timer
 * sets the pace, the database's answers do. The appends of all the runner's replies go out
 * together (`TextAppends`), one statement for all that grew meanwhile. The reply's messages are written at each step end
 * (`stepEnded`, awaited by the runner before it passes the step's end on), and the lease is
 * renewed every third of its length for as long as the runner holds the turn (running, and
 * settling its reply). A checkpoint or renewal that finds the turn no longer this runner's calls
 * `lost`. A database outage is logged once, and its end once; meanwhile a failed write is tried
 * again every `RETRY_MS`.
 */
export class TurnCheckpoints {
  private readonly leaseTimer: NodeJS.Timeout;
  /** The next try after a failed write (only while the database refuses them). */
  private retryTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private inFlight = false;
  private dirty = false;
  /** A step ended whose messages are not written yet (their write failed). */
  private partsPending = false;
  private failing = false;
  private stopped = false;
  /** What the row holds, as far as this runner knows: the message and its text (null: unsure). */
  private written: { id: string | null; text: string; bytes: number } | null = null;

  constructor(
    private readonly deps: CheckpointDeps,
    private readonly turnId: string,
    private readonly reply: ReplyRecord,
    private readonly lost: () => void,
    /** What the claim wrote: a continued turn starts from its stored checkpoint. */
    written: { id: string | null; text: string },
  ) {
    this.written = { ...written, bytes: Buffer.byteLength(written.text) };
    this.leaseTimer = setInterval(() => void this.renew(), deps.leaseMs / 3);
  }

  /** Text streamed: written now, or as soon as the write in flight completes. */
  textGrew(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.inFlight || this.retryTimer) return;
    if (!this.failing) {
      void this.flush(false);
      return;
    }
    // The database refused the last write: the next try waits, rather than hammering it.
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.dirty && !this.stopped) void this.flush(false);
    }, RETRY_MS);
  }

  /**
   * A step ended (a tool's outcome, a steer taken in, a step's end): the reply so far is written
   * now (its messages too when it has more than text), and this resolves once it is stored. While
   * the database is away it resolves at once (the stream goes on; the write is retried behind it).
   */
  async stepEnded(): Promise<void> {
    if (this.stopped) return;
    const write = this.flush(this.reply.structured);
    if (!this.failing) await write;
  }

  /**
   * Stops text checkpoints (the run ended); the lease is still renewed until `release`. A text
   * write still in flight is not waited for: the settle that follows writes the whole reply, and
   * an append that lands after it finds the turn no longer running and changes nothing.
   */
  finishStreaming(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.stopped = true;
  }

  /** The runner no longer holds the turn (it is settled, or left to crash recovery). */
  async release(): Promise<void> {
    clearInterval(this.leaseTimer);
    this.finishStreaming();
    await this.writing;
  }

  /** One write at a time, in order; `withParts` writes the reply's messages too. */
  private flush(stepEnd: boolean): Promise<void> {
    this.dirty = false;
    // Counts as in flight from now: text that grows before the write starts waits for the next.
    this.inFlight = true;
    if (stepEnd) this.partsPending = true;
    const write = this.writing.then(() => this.write(this.partsPending));
    this.writing = write;
    return write;
  }

  private async write(withParts: boolean): Promise<void> {
    this.inFlight = true;
    const { db, runnerId, leaseMs } = this.deps;
    const id = this.reply.currentId;
    const text = this.reply.currentText;
    try {
      const known = this.written;
      let ours: boolean;
      if (!withParts && known && known.id === id && text.startsWith(known.text)) {
        const delta = text.slice(known.text.length);
        ours = delta === '' || (await this.deps.appends.append(this.turnId, delta, known.bytes));
        // Not appended: the row holds something else than this runner knows (a write whose answer
        // was lost), or the turn is no longer its own; the whole text says which.
        if (ours) this.written = { id, text, bytes: known.bytes + Buffer.byteLength(delta) };
      } else ours = false;
      if (!ours) {
        this.written = null;
        ours = await checkpointRunningTurn(db, this.turnId, runnerId, leaseMs, {
          assistantMessageId: id,
          partialText: text,
          ...(withParts ? { partialParts: this.reply.snapshot() } : {}),
        });
        if (ours) this.written = { id, text, bytes: Buffer.byteLength(text) };
        if (ours && withParts) this.partsPending = false;
      }
      // After the run's end, a turn no longer running may be its own settle's doing (see
      // `finishStreaming`): the settle, under the thread lock, finds out whether it is still ours.
      if (!ours && !this.stopped) this.lost();
      this.recovered();
    } catch (error) {
      this.written = null;
      // Tried again behind the stream (the reply's messages too, if they were part of it).
      this.dirty = true;
      this.failed(error);
    } finally {
      this.inFlight = false;
      if (this.dirty && !this.stopped) this.textGrew();
    }
  }

  private async renew(): Promise<void> {
    const { db, runnerId, leaseMs } = this.deps;
    try {
      if (!(await renewLease(db, this.turnId, runnerId, leaseMs))) this.lost();
      this.recovered();
    } catch (error) {
      this.failed(error);
    }
  }

  private failed(error: unknown): void {
    if (!this.failing) this.deps.logger.warn({ err: error, turnId: this.turnId }, 'turn checkpoint failed');
    this.failing = true;
  }

  private recovered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.deps.logger.info({ turnId: this.turnId }, 'turn checkpoints work again');
  }
}
