import type { Signals } from '../../../platform/notifications';

/**
 * A thread's `turn.settled` signals (from whichever instance settles its turn), heard from the
 * moment the watch is made: made before the turn is read, no settle after that read is missed, so
 * a Stop waits for the signal instead of reading the row again first. A signal that arrives while
 * the row is being read is kept too (the read's answer may be from before the settle): the wait
 * after that read ends at once. Any turn of the thread wakes it; the caller reads which it was.
 */
export class SettleWatch {
  private heard = false;
  private wake = () => {};
  private readonly unsubscribe: () => void;

  constructor(signals: Signals, threadId: string) {
    this.unsubscribe = signals.subscribe((signal) => {
      if (signal.kind !== 'turn.settled' || signal.threadId !== threadId) return;
      this.heard = true;
      this.wake();
    });
  }

  /** Forgets what was heard so far: a read of the turn follows, and sees it. */
  reset(): void {
    this.heard = false;
  }

  /** Resolves once a settle is heard (at once when one was since `reset`), or after `ms`. */
  async wait(ms: number): Promise<void> {
    if (this.heard) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = () => {};
  }

  close(): void {
    this.unsubscribe();
  }
}
