import { isPassingDatabaseError } from '../../../platform/databaseErrors';
import type { Logger } from '../../../platform/logger';

/** The first and the longest pause between two tries to make a finished run durable. */
export const SETTLE_PAUSE_MS = { first: 250, max: 2_000 } as const;

/** How long a settle failing for a reason other than an outage is tried again by default (F1). */
export const DEFAULT_SETTLE_GIVE_UP_MS = 60_000;

/** Pauses between tries of something the database holds up: growing, up to `SETTLE_PAUSE_MS.max`. */
export class GrowingPause {
  private pause: number = SETTLE_PAUSE_MS.first;

  /** The pause before the next try. */
  next(): number {
    const pause = this.pause;
    this.pause = Math.min(this.pause * 2, SETTLE_PAUSE_MS.max);
    return pause;
  }

  /** The pause the next `next()` gives, without taking it. */
  peek(): number {
    return this.pause;
  }
}

/**
 * F1: how long one turn's settle is tried again, decided by its errors. An outage (the database
 * away, a connection reset, a transaction that lost a race) passes by itself: it is waited out,
 * however long it lasts. Any other error fails the same way on every try: it is tried again for
 * `giveUpMs` after the first one (a bug of the moment, a lock, a constraint the next try may
 * meet differently), then given up, and the turn ends `failed` (`failUnsettledTurn`). An outage
 * never counts towards that time, but does not restart it either. The turn's error is logged at
 * its first failure (`notYet`, the caller's words) and once more when it is given up.
 */
export class SettleRetry {
  private firstFailureAt: number | undefined;
  private readonly pauses = new GrowingPause();
  tries = 0;

  constructor(
    private readonly giveUpMs: number,
    private readonly log: { logger: Logger; turn: { id: string; threadId: string }; notYet: string },
  ) {}

  /** A try failed with `error`: whether to give up now (else wait `nextPauseMs()` and try again). */
  failed(error: unknown, now = Date.now()): boolean {
    this.tries += 1;
    let giveUp = false;
    if (!isPassingDatabaseError(error)) {
      this.firstFailureAt ??= now;
      giveUp = now - this.firstFailureAt >= this.giveUpMs;
    }
    const { logger, turn, notYet } = this.log;
    if (giveUp)
      // Logged once, with the error that kept it from settling; the person reads notSaved.
      logger.error(
        { err: error, turnId: turn.id, threadId: turn.threadId, tries: this.tries },
        'gave up settling a turn; it ended failed',
      );
    else if (this.tries === 1) logger.warn({ err: error, turnId: turn.id }, notYet);
    return giveUp;
  }

  /** The pause before the next try. */
  nextPauseMs(): number {
    return this.pauses.next();
  }
}
