import { randomUUID } from 'node:crypto';
import type { Sql } from '@chat/db';
import type { Logger } from './logger';

/**
 * Small signals between API instances over Postgres LISTEN/NOTIFY: every instance, including the
 * sender, receives every signal, so one code path serves one instance and many.
 * Payloads stay tiny (ids only); receivers read the current state from the database.
 */
export type Signal =
  | { kind: 'interrupt'; threadId: string; turnId: string }
  /** A steer was sent into the thread's running turn: its runner redirects it into the run. */
  | { kind: 'steer'; threadId: string }
  | { kind: 'turn.started'; threadId: string; turnId: string }
  | { kind: 'turn.settled'; threadId: string; turnId: string }
  | { kind: 'queue.changed'; threadId: string }
  | { kind: 'hitl.changed'; threadId: string }
  | { kind: 'thread.changed'; threadId: string }
  | { kind: 'feedback.changed'; threadId: string; messageId: string }
  | { kind: 'thread.deleted'; threadId: string };

type Listener = (signal: Signal) => void;

const CHANNEL = 'chat_signals';

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
    await this.client?.end({ timeout: 1 });
  }

  async publish(signal: Signal): Promise<void> {
    await this.sql.notify(CHANNEL, JSON.stringify(signal));
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async listen(): Promise<void> {
    const client = this.connectListener();
    try {
      await client.listen(CHANNEL, (payload) => this.dispatch(payload));
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
