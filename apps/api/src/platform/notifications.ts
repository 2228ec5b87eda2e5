import { randomUUID } from 'node:crypto';
import { preparedSql, type Queryable, type Sql } from '@chat/db';
import { sql } from 'drizzle-orm';
import type { Logger } from './logger';

/**
 * Small signals between API instances over Postgres LISTEN/NOTIFY: every instance, including the
 * sender, receives every signal, so one code path serves one instance and many.
 * Payloads stay tiny (ids only); receivers read the current state from the database.
 */
export type Signal =
  | ThreadSignal
  /** Some of a user's sessions ended: instances forget what they cached of that user's sessions. */
  | { kind: 'sessions.ended'; userId: string }
  /**
   * A viewer on some instance follows a running turn from piece `from` on: the instance running
   * it sends its pieces on the stream channel (again from `from`) for a while (renewed by the viewer).
   */
  | { kind: 'stream.watch'; turnId: string; from: number };

/** A signal about one thread (what its tabs' event streams follow). */
export type ThreadSignal =
  | { kind: 'interrupt'; threadId: string; turnId: string }
  /** A steer was sent into the thread's running turn: its runner redirects it into the run. */
  | { kind: 'steer'; threadId: string }
  | { kind: 'turn.started'; threadId: string; turnId: string }
  /**
   * `background`: whether the chat's queue drains with no page open (Q15), as the settling
   * transaction read it under the thread lock; the background drain reads nothing more for a chat
   * that does not (a later change of that choice sends `thread.changed`). Left out by senders that
   * did not read it: the drain looks.
   */
  | { kind: 'turn.settled'; threadId: string; turnId: string; background?: boolean }
  | { kind: 'queue.changed'; threadId: string }
  | { kind: 'hitl.changed'; threadId: string }
  | { kind: 'thread.changed'; threadId: string }
  | { kind: 'feedback.changed'; threadId: string; messageId: string }
  /** A compaction moved where the model's view of one of the thread's branches starts (C3). */
  | { kind: 'context.changed'; threadId: string }
  | { kind: 'thread.deleted'; threadId: string };

type Listener = (signal: Signal) => void;

const CHANNEL = 'chat_signals';
/**
 * A second channel for the pieces of running replies that another instance's viewer follows
 * (`turns/stream/fanOut.ts`): bulky and only sent while someone watches, so signal listeners never
 * parse them.
 */
const STREAM_CHANNEL = 'chat_streams';

/**
 * PostgreSQL refuses a NOTIFY payload of 8000 bytes or more (default build); stream pieces stay
 * under this.
 */
export const MAX_NOTIFY_BYTES = 7_600;

export interface SignalsOptions {
  /** How often the LISTEN connection is checked with a ping through the channel. */
  checkMs?: number;
  /**
   * Each failed check's error. The ping goes through the pool requests use, every 2 s, so this is
   * how the database circuit learns of an outage while no request is being made.
   */
  onCheckFailed?: (error: unknown) => void;
}

/** A check every this often; a listener that heard nothing (not even its own pings) for 3 checks is replaced. */
const CHECK_MS = 2_000;
const STALE_CHECKS = 3;

/**
 * postgres.js re-listens once when its LISTEN connection closes and drops the channel for good if
 * that fails (the database is still down). So Signals watches its own listener: every check it
 * sends itself a ping; when nothing arrived for a while it ends the listening client and listens
 * again on a new one, each failure logged and tried again at the next check.
 */
export class Signals {
  private readonly listeners = new Set<Listener>();
  private readonly streamListeners = new Set<(payload: string) => void>();
  private readonly pingId = randomUUID();
  private readonly checkMs: number;
  private readonly onCheckFailed: (error: unknown) => void;
  private client: Sql | undefined;
  private heardAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private stopped = false;
  private failing = false;

  /**
   * @param sql publishes (the pool every query uses)
   * @param connectListener opens a new client for the LISTEN connection
   */
  constructor(
    private readonly sql: Sql,
    private readonly connectListener: () => Sql,
    private readonly logger: Logger,
    options: SignalsOptions = {},
  ) {
    this.checkMs = options.checkMs ?? CHECK_MS;
    this.onCheckFailed = options.onCheckFailed ?? (() => {});
  }

  async start(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => void this.check(), this.checkMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.listeners.clear();
    this.streamListeners.clear();
    await this.client?.end({ timeout: 1 });
  }

  async publish(signal: Signal): Promise<void> {
    await this.sql.notify(CHANNEL, JSON.stringify(signal));
  }

  /**
   * Publishes `signals` with the transaction `tx`: PostgreSQL delivers them when it commits (and
   * never if it rolls back), and they go out with the transaction's other statements instead of
   * a round trip of their own after it.
   */
  async publishWith(tx: Queryable, ...signals: Signal[]): Promise<void> {
    await Promise.all(
      signals.map((signal) => notifyWith(tx, { channel: CHANNEL, payload: JSON.stringify(signal) })),
    );
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends a piece of a running reply (at most MAX_NOTIFY_BYTES) to every instance's stream listeners. */
  async publishStream(payload: string): Promise<void> {
    await this.sql.notify(STREAM_CHANNEL, payload);
  }

  /** Every stream piece any instance publishes, as it was published. */
  subscribeStream(listener: (payload: string) => void): () => void {
    this.streamListeners.add(listener);
    return () => this.streamListeners.delete(listener);
  }

  private async listen(): Promise<void> {
    const client = this.connectListener();
    try {
      await client.listen(CHANNEL, (payload) => this.dispatch(payload));
      await client.listen(STREAM_CHANNEL, (payload) => this.dispatchStream(payload));
    } catch (error) {
      await client.end({ timeout: 0 }).catch(() => {});
      throw error;
    }
    this.client = client;
    this.heardAt = Date.now();
  }

  /** Pings itself; replaces a listener that heard nothing for too long. Never throws. */
  private async check(): Promise<void> {
    if (this.checking || this.stopped) return;
    this.checking = true;
    try {
      if (Date.now() - this.heardAt > this.checkMs * STALE_CHECKS) {
        const old = this.client;
        this.client = undefined;
        await old?.end({ timeout: 0 }).catch(() => {});
        await this.listen();
        this.logger.info('listening for signals again');
      }
      await this.sql.notify(CHANNEL, JSON.stringify({ kind: 'ping', id: this.pingId }));
      this.failing = false;
    } catch (error) {
      // Once per outage at warn; the check runs again in checkMs.
      if (!this.failing) this.logger.warn({ err: error }, 'signals connection check failed; retrying');
      this.failing = true;
      this.onCheckFailed(error);
    } finally {
      this.checking = false;
    }
  }

  private dispatchStream(payload: string): void {
    this.heardAt = Date.now();
    for (const listener of this.streamListeners) {
      try {
        listener(payload);
      } catch (error) {
        this.logger.error({ err: error }, 'stream listener failed');
      }
    }
  }

  private dispatch(payload: string): void {
    this.heardAt = Date.now();
    let signal: Signal | { kind: 'ping' };
    try {
      signal = JSON.parse(payload) as Signal | { kind: 'ping' };
    } catch {
      this.logger.warn('ignoring malformed signal');
      return;
    }
    if (signal.kind === 'ping') return;
    for (const listener of this.listeners) {
      try {
        listener(signal);
      } catch (error) {
        this.logger.error({ err: error, signal }, 'signal listener failed');
      }
    }
  }
}

/** Sent with every accepted turn and every settle: built once (preparedSql). */
const notifyWith = preparedSql<{ channel: string; payload: string }>(
  'notify_with',
  sql`select pg_notify(${sql.placeholder('channel')}, ${sql.placeholder('payload')})`,
);
