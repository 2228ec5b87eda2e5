import { isDatabaseUnavailable } from './databaseErrors';
import { databaseUnavailable } from './errors';
import type { Logger } from './logger';

export interface DatabaseCircuitOptions {
  /** One cheap query (`select 1`); rejects when the database does not answer. */
  probe: () => Promise<unknown>;
  logger: Logger;
  /** Pause between two probes while the circuit is open. */
  probeIntervalMs?: number;
  /** A probe not answered by then counts as failed. */
  probeTimeoutMs?: number;
}

/**
 * The API's view of whether the database can be reached, so that requests fail fast during an
 * outage instead of each one waiting out connection attempts.
 *
 * Closed (the normal state): requests go to the database. The first request that fails with a
 * connection error (refused, reset, timed out, the server shutting down) opens the circuit. Open:
 * every request except `/api/health` is answered `503 unavailable` with `Retry-After` at once,
 * without touching the database, while a probe runs every `probeIntervalMs` through the same pool
 * the requests use; the first probe that answers closes it again. Background work (heartbeats,
 * sweepers, signals) does not look at the circuit: it retries with its own backoff.
 */
export class DatabaseCircuit {
  private open = false;
  private readonly openListeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly probeIntervalMs: number;
  private readonly probeTimeoutMs: number;

  constructor(private readonly options: DatabaseCircuitOptions) {
    this.probeIntervalMs = options.probeIntervalMs ?? 500;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 1_500;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Calls `listener` each time the circuit opens; returns the unsubscribe. */
  onOpen(listener: () => void): () => void {
    this.openListeners.add(listener);
    return () => this.openListeners.delete(listener);
  }

  /** `503 unavailable` while the circuit is open. */
  assertClosed(): void {
    if (this.open) throw databaseUnavailable();
  }

  /**
   * Looks at an error from a database call: a connection error opens the circuit. Returns whether
   * it was one (the caller then answers `503 unavailable`).
   */
  recordFailure(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (!this.open && !this.stopped) {
      this.open = true;
      this.options.logger.warn('database unreachable: answering 503 until it answers again');
      this.scheduleProbe(0);
      for (const listener of [...this.openListeners]) listener();
    }
    return true;
  }

  /**
   * The database answered a query made outside the circuit (`/api/ready`'s): the same evidence as a
   * probe's answer, so an open circuit closes now. Otherwise ready could say 200 while the next
   * request still got `503` until the next probe.
   */
  recordAnswer(): void {
    if (!this.open || this.stopped) return;
    this.open = false;
    clearTimeout(this.timer);
    this.options.logger.info('database reachable again');
  }

  /** Ends the probing (shutdown). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private scheduleProbe(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.probe(), delayMs);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('probe timed out')), this.probeTimeoutMs);
    });
    try {
      await Promise.race([this.options.probe(), timeout]);
    } catch {
      // Closed meanwhile (`recordAnswer`): nothing left to probe for.
      if (this.open) this.scheduleProbe(this.probeIntervalMs);
      return;
    } finally {
      clearTimeout(timer);
    }
    this.recordAnswer();
  }
}
