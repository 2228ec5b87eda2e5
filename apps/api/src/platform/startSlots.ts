import { refusalMessages } from '@chat/contracts';
import { ApiError } from './errors';

export interface StartSlotLimits {
  /** Requests that start a turn, handled at once; the rest wait in line. */
  atOnce: number;
  /** Requests waiting for a slot; one more is refused at once. */
  maxWaiting: number;
  /** The longest a request waits in line before it is refused. */
  maxWaitMs: number;
}

/** Whether this process's event loop is too far behind to take on a send (`LoopDelay`). */
export interface LoopPressure {
  readonly behind: boolean;
}

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
 * `clientRequestId` is safe). The same answer, with every slot free, while the process's event
 * loop is too far behind (`loop`): a send then would only slow every answer already in the loop.
 * Reads, Stop, Stop & send and approvals never pass here: they keep working while sends are shed.
 * In this process's memory: it is this instance's capacity.
 */
export class StartSlots {
  private running = 0;
  private readonly line: Array<{ start: () => void }> = [];

  constructor(
    private readonly limits: StartSlotLimits,
    private readonly loop: LoopPressure = { behind: false },
  ) {}

  /** How many requests hold a slot now, and how many wait. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.line.length };
  }

  /**
   * Resolves with the release once this request may go on (call it when its answer is ready,
   * whatever the outcome). Rejects with `503 overloaded` when the event loop is behind, the line is
   * full or the wait too long.
   */
  async acquire(): Promise<() => void> {
    if (this.loop.behind) throw overloadedSends();
    if (this.running < this.limits.atOnce) return this.start();
    if (this.line.length >= this.limits.maxWaiting) throw overloadedSends();
    return await new Promise<() => void>((resolve, reject) => {
      const waiter = {
        start: () => {
          clearTimeout(timer);
          resolve(this.start());
        },
      };
      const timer = setTimeout(() => {
        const at = this.line.indexOf(waiter);
        if (at >= 0) this.line.splice(at, 1);
        reject(overloadedSends());
      }, this.limits.maxWaitMs);
      this.line.push(waiter);
    });
  }

  private start(): () => void {
    this.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      this.line.shift()?.start();
    };
  }
}
