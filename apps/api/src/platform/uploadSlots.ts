import { refusalMessages } from '@chat/contracts';
import { ApiError } from './errors';
import { rateLimited } from './rateLimit';

/** The waiting line of every pool of slots (uploads, document readings): its bounds and wait. */
export const UPLOAD_LINE = { maxWaitingPerAccount: 8, maxWaiting: 64, maxWaitMs: 30_000 } as const;

export interface UploadSlotLimits {
  /** Uploads of one account read at once. */
  perAccount: number;
  /** Uploads read at once, all accounts together. */
  total: number;
  /** Uploads of one account waiting for a slot; one more is `429 rate_limited`. */
  maxWaitingPerAccount: number;
  /** Uploads waiting in all; one more is `503 overloaded`. */
  maxWaiting: number;
  /** The longest an upload waits for a slot before it is refused (`503 overloaded`). */
  maxWaitMs: number;
}

interface Waiter {
  accountId: string;
  start: (release: () => void) => void;
  refuse: (error: unknown) => void;
}

/** Seconds a refused upload is told to wait before it tries again. */
const RETRY_AFTER_SECONDS = 2;

export const overloaded = () =>
  new ApiError('overloaded', refusalMessages.overloaded.uploads, undefined, {
    'retry-after': String(RETRY_AFTER_SECONDS),
  });

/**
 * How many uploads are read at once, per account and in all, so a flood of uploads cannot take the
 * process (and the database) from sends and reads. An upload past a cap waits in line, its body
 * unread (the client's own connection holds it back), and starts when a slot frees: the first in
 * line whose account is under its own cap goes next, so one account's line never holds back
 * another's. The line is bounded in length and in time. In this process's memory: per API instance.
 */
export class UploadSlots {
  private running = 0;
  private readonly runningOf = new Map<string, number>();
  private readonly line: Waiter[] = [];

  constructor(private readonly limits: UploadSlotLimits) {}

  /**
   * Resolves with a release function once this upload may be read; call it when the upload is done,
   * whatever its outcome. Rejects past the line's bounds, or when `signal` aborts while it waits.
   */
  async acquire(accountId: string, signal?: AbortSignal): Promise<() => void> {
    if (this.mayStart(accountId)) return this.start(accountId);
    const waitingOfAccount = this.line.filter((waiter) => waiter.accountId === accountId).length;
    if (waitingOfAccount >= this.limits.maxWaitingPerAccount) throw rateLimited(RETRY_AFTER_SECONDS);
    if (this.line.length >= this.limits.maxWaiting) throw overloaded();
    return await new Promise<() => void>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = this.line.indexOf(waiter);
        if (at >= 0) this.line.splice(at, 1);
      };
      const waiter: Waiter = {
        accountId,
        start: (release) => {
          leave();
          resolve(release);
        },
        refuse: (error) => {
          leave();
          reject(error);
        },
      };
      const timer = setTimeout(() => waiter.refuse(overloaded()), this.limits.maxWaitMs);
      const onAbort = () => waiter.refuse(signal?.reason ?? new Error('the client went away'));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.line.push(waiter);
    });
  }

  private mayStart(accountId: string): boolean {
    return this.running < this.limits.total && (this.runningOf.get(accountId) ?? 0) < this.limits.perAccount;
  }

  private start(accountId: string): () => void {
    this.running += 1;
    this.runningOf.set(accountId, (this.runningOf.get(accountId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      const left = (this.runningOf.get(accountId) ?? 1) - 1;
      if (left > 0) this.runningOf.set(accountId, left);
      else this.runningOf.delete(accountId);
      this.startWaiting();
    };
  }

  /** Starts waiting uploads, first in line first, skipping those whose account is at its cap. */
  private startWaiting(): void {
    for (const waiter of [...this.line]) {
      if (this.running >= this.limits.total) return;
      if (this.mayStart(waiter.accountId)) waiter.start(this.start(waiter.accountId));
    }
  }
}
