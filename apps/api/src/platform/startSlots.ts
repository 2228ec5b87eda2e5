import { refusalMessages } from '@chat/contracts';
import { ApiError } from './errors';

export interface StartSlotLimits {
  /** Requests that start a turn, handled at once; the rest wait in line. */
  atOnce: number;
  /** Requests waiting for a slot; one more is refused at once. */
  maxWaiting: number;
  /** The longest a request waits in line before it is refused. */
  maxWaitMs: number;
  /** How far behind (ms) the event loop may be before any send is refused; `0`: no bound. */
  maxLoopDelayMs: number;
  /**
   * The lower bound that holds while other sends are starting or waiting (and for a waiting send
   * whose turn comes); `0`: no bound.
   */
  maxLoopDelayBesideSendsMs: number;
}

/** How far behind this process's event loop is, in milliseconds (`LoopDelay`). */
export interface LoopPressure {
  readonly delayMs: number;
}

/** Sends are counted as they arrive over windows this long (`StartSlots.arrived`). */
const ARRIVAL_WINDOW_MS = 250;

/**
 * How late the event loop may be when a send is taken on beside other sends (a burst): the default
 * of `SEND_LOOP_DELAY_BESIDE_SENDS_MS`. Sheds hold the loop about at this bound while a burst lasts
 * (sends are taken on while it is under, refused past it), and every millisecond it is behind is
 * added to the gap between two words of every reply streaming on it (50 ms apart at 20 words a
 * second, read as even up to 75 ms apart). So the lower the better for the streams, but not lower
 * than a steady stream of sends needs: at 25 ms (the words' whole slack) one garbage collection or
 * one long read in a window refused sends arriving at 50 a second (17 of 500 in a quiet run);
 * at 35 every rate up to 200 a second started them all. ADR-061.
 */
export const BURST_LOOP_DELAY_MS = 35;

/** Seconds a refused send is told to wait before it tries again. */
export const OVERLOAD_RETRY_AFTER_S = 1;

/** `503 overloaded`: the send was not accepted (nothing was recorded); the same request may come again. */
export const overloadedSends = () =>
  new ApiError('overloaded', refusalMessages.overloaded.sends, undefined, {
    'retry-after': String(OVERLOAD_RETRY_AFTER_S),
  });

/**
 * Load shedding for requests that start turns (a send, an edit into a new version, a regenerate):
 * at most `atOnce` are handled at a time, from arrival to their answer's headers; a few more wait
 * in a short line. Past that the box is starting turns as fast as it can, and a request that waited
 * would only wait longer the more arrive: it is answered `503 overloaded` with `Retry-After` at
 * once, before its session is even looked up, and nothing of it is recorded (a retry with the same
 * `clientRequestId` is safe).
 *
 * The same answer, with slots free, while the process's event loop is behind (`loop`): a send then
 * would only slow every answer already in the loop. Two bounds: a lone send is refused only when
 * the loop is far behind (`maxLoopDelayMs`: a big upload or one long read must not turn away the
 * next message), but beside other sends starting or waiting, or after more sends than the slots hold arrived
 * within about half a second, a much smaller delay is enough (`maxLoopDelayBesideSendsMs`): that
 * is a burst, and each send it takes on costs the loop more
 * than the one before it. A waiting send whose turn comes while the loop is past that bound is
 * refused too, and so is the rest of the line: they arrived with the burst.
 *
 * Reads, Stop, Stop & send and approvals never pass here: they keep working while sends are shed.
 * In this process's memory: it is this instance's capacity.
 */
export class StartSlots {
  private running = 0;
  private readonly line: Array<{ start: () => void; refuse: () => void }> = [];
  private readonly arrivals = { windowStart: 0, current: 0, previous: 0 };

  constructor(
    private readonly limits: StartSlotLimits,
    private readonly loop: LoopPressure = { delayMs: 0 },
  ) {}

  /** How many requests hold a slot now, and how many wait. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.line.length };
  }

  /**
   * Resolves with the release once this request may go on (call it when its answer is ready,
   * whatever the outcome). Rejects with `503 overloaded` when the event loop is behind, the line is
   * full or the wait too long. `counted`: its arrival was counted already (`refusesAtOnce`, at the
   * door), so it is not counted twice.
   */
  async acquire({ counted = false }: { counted?: boolean } = {}): Promise<() => void> {
    if (this.refusesNow(this.arrived(counted ? 0 : 1))) throw overloadedSends();
    if (this.running < this.limits.atOnce) return this.start();
    return await new Promise<() => void>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        const at = this.line.indexOf(waiter);
        if (at >= 0) this.line.splice(at, 1);
      };
      const waiter = {
        start: () => {
          leave();
          resolve(this.start());
        },
        refuse: () => {
          leave();
          reject(overloadedSends());
        },
      };
      const timer = setTimeout(waiter.refuse, this.limits.maxWaitMs);
      this.line.push(waiter);
    });
  }

  /**
   * Counts a send's arrival (as `acquire` does) and says whether `acquire` would refuse it at once,
   * without waiting: the loop is behind, or every slot is taken and the line is full. For a
   * decision at the door (`platform/sendDoor.ts`), before the request is read; a send that passes
   * then calls `acquire({ counted: true })`, which decides again with what is so by then.
   */
  refusesAtOnce(): boolean {
    return this.refusesNow(this.arrived(1));
  }

  /** Refused at once with `arrivals` sends over the last half second or so. */
  private refusesNow(arrivals: number): boolean {
    const burst = arrivals > this.limits.atOnce;
    if (this.behind(burst || this.running + this.line.length > 0)) return true;
    return this.running >= this.limits.atOnce && this.line.length >= this.limits.maxWaiting;
  }

  /**
   * Counts this send's arrival (`count`: 0 when it was counted already); returns how many arrived
   * over the last half second or so (this window and the one before). More than the slots hold is
   * a burst, even at a moment when none of them is starting (each holds its slot only until its
   * answer's headers).
   */
  private arrived(count: 0 | 1, now = performance.now()): number {
    const arrivals = this.arrivals;
    const elapsed = now - arrivals.windowStart;
    if (elapsed >= 2 * ARRIVAL_WINDOW_MS) {
      arrivals.previous = 0;
      arrivals.current = 0;
      arrivals.windowStart = now;
    } else if (elapsed >= ARRIVAL_WINDOW_MS) {
      arrivals.previous = arrivals.current;
      arrivals.current = 0;
      arrivals.windowStart += ARRIVAL_WINDOW_MS;
    }
    arrivals.current += count;
    return arrivals.current + arrivals.previous;
  }

  /** Past the bound that holds now: the lower one beside other sends (a burst). */
  private behind(besideSends: boolean): boolean {
    const { maxLoopDelayMs, maxLoopDelayBesideSendsMs } = this.limits;
    const bound = besideSends && maxLoopDelayBesideSendsMs > 0 ? maxLoopDelayBesideSendsMs : maxLoopDelayMs;
    return bound > 0 && this.loop.delayMs > bound;
  }

  private start(): () => void {
    this.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      if (this.line.length > 0 && this.behind(true)) {
        for (const waiter of [...this.line]) waiter.refuse();
        return;
      }
      this.line[0]?.start();
    };
  }
}
