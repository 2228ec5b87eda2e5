import { type ELDHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the measured delay is read and started again. */
const WINDOW_MS = 500;

/**
 * How far behind this process's event loop is: the longest delay of a timer the runtime itself
 * samples (`monitorEventLoopDelay`, no work of ours per tick), over the last whole window and the
 * one running now. A send is refused while it is past a bound (`StartSlots`): a saturated
 * process would otherwise take on more work than it can answer in time, and every request already
 * in the loop, Stop and reads included, would answer later for it. Counting starts alone does not
 * see this: a few long streams, a big import or a neighbour on the same cores saturate the loop
 * with every start slot free.
 */
export class LoopDelay {
  private readonly histogram: ELDHistogram = monitorEventLoopDelay({ resolution: 10 });
  private lastWindowMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.lastWindowMs = this.currentMs();
      this.histogram.reset();
    }, WINDOW_MS);
    this.timer.unref();
  }

  /** The longest delay seen over the last window and this one, in milliseconds. */
  get delayMs(): number {
    return Math.max(this.lastWindowMs, this.currentMs());
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private currentMs(): number {
    // A histogram with no sample yet reports 0 as its max (and a huge min); nanoseconds otherwise.
    return this.histogram.count === 0 ? 0 : this.histogram.max / 1e6;
  }
}
