import type { Sql } from '@chat/db';
import type { Logger } from './logger';

/**
 * Small signals between API instances over Postgres LISTEN/NOTIFY: every instance, including the
 * sender, receives every signal, so one code path serves one instance and many.
 * Payloads stay tiny (ids only); receivers read the current state from the database.
 */
export type Signal =
  | { kind: 'interrupt'; threadId: string; turnId: string }
  | { kind: 'turn.started'; threadId: string; turnId: string }
  | { kind: 'turn.settled'; threadId: string; turnId: string }
  | { kind: 'queue.changed'; threadId: string }
  | { kind: 'thread.changed'; threadId: string }
  | { kind: 'feedback.changed'; threadId: string; messageId: string }
  | { kind: 'thread.deleted'; threadId: string };

type Listener = (signal: Signal) => void;

const CHANNEL = 'chat_signals';

export class Signals {
  private readonly listeners = new Set<Listener>();
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const { unlisten } = await this.sql.listen(CHANNEL, (payload) => this.dispatch(payload));
    this.unlisten = unlisten;
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.listeners.clear();
  }

  async publish(signal: Signal): Promise<void> {
    await this.sql.notify(CHANNEL, JSON.stringify(signal));
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private dispatch(payload: string): void {
    let signal: Signal;
    try {
      signal = JSON.parse(payload) as Signal;
    } catch {
      this.logger.warn({ payload }, 'ignoring malformed signal');
      return;
    }
    for (const listener of this.listeners) {
      try {
        listener(signal);
      } catch (error) {
        this.logger.error({ err: error, signal }, 'signal listener failed');
      }
    }
  }
}
