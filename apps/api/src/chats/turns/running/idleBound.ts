import type { DriverEvent } from '../driver/types';

/**
 * A run's events with a bound on its silence: `next()` gives the driver's next event, or `idle`
 * when none came within `idleMs` of asking. One timer serves the whole run, moved along by each
 * event: a timer and a promise race per event cost more than most events (a reply's words, at a
 * thousand replies at once).
 */
export class IdleBoundEvents {
  private timer: NodeJS.Timeout | undefined;
  private deadline = 0;
  private waiting: ((result: IteratorResult<DriverEvent> | 'idle') => void) | undefined;

  constructor(
    private readonly events: AsyncIterator<DriverEvent>,
    private readonly idleMs: number,
  ) {}

  next(): Promise<IteratorResult<DriverEvent> | 'idle'> {
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.deadline = performance.now() + this.idleMs;
      if (!this.timer) {
        this.timer = setTimeout(this.check, this.idleMs);
        // A run left without `stop` must not hold the process open.
        this.timer.unref();
      }
      this.events.next().then(
        (result) => {
          if (this.waiting !== resolve) return;
          this.waiting = undefined;
          resolve(result);
        },
        (error: unknown) => {
          if (this.waiting !== resolve) return;
          this.waiting = undefined;
          reject(error);
        },
      );
    });
  }

  /** The run is over: no more waiting, no timer. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.waiting = undefined;
  }

  /** The timer fired: idle if the wait asked for last is past its bound, else wait out the rest. */
  private readonly check = () => {
    this.timer = undefined;
    const waiting = this.waiting;
    if (!waiting) return;
    const left = this.deadline - performance.now();
    if (left > 0) {
      this.timer = setTimeout(this.check, left);
      this.timer.unref();
      return;
    }
    this.waiting = undefined;
    waiting('idle');
  };
}
