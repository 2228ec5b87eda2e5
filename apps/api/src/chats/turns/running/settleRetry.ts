import { isPassingDatabaseError } from '../../../platform/databaseErrors';

/** The first and the longest pause between two tries to make a finished run durable. */
export const SETTLE_PAUSE_MS = { first: 250, max: 2_000 } as const;

/**
 * F1: how long one turn's settle is tried again, decided by its errors. An outage (the database
 * away, a connection reset, a transaction that lost a race) passes by itself: it is waited out,
 * however long it lasts. Any other error fails the same way on every try: it is tried again for
 * `giveUpMs` after the first one (a bug of the moment, a lock, a constraint the next try may
 * meet differently), then given up, and the turn ends `failed` (`failUnsettledTurn`). An outage
 * never counts towards that time, but does not restart it either.
 */
export class SettleRetry {
  private firstFailureAt: number | undefined;
  private pause: number = SETTLE_PAUSE_MS.first;
  tries = 0;

  constructor(private readonly giveUpMs: number) {}

  /** A try failed with `error`: whether to give up now (else wait `nextPauseMs()` and try again). */
  failed(error: unknown, now = Date.now()): boolean {
    this.tries += 1;
    if (isPassingDatabaseError(error)) return false;
    this.firstFailureAt ??= now;
    return now - this.firstFailureAt >= this.giveUpMs;
  }

  /** The pause before the next try: growing, up to `SETTLE_PAUSE_MS.max`. */
  nextPauseMs(): number {
    const pause = this.pause;
    this.pause = Math.min(this.pause * 2, SETTLE_PAUSE_MS.max);
    return pause;
  }
}
