import { inStatusGroup, refusalMessages, type StopAndSendLeftWaiting, type Turn } from '@chat/contracts';
import type { TurnRow } from '@chat/db';
import { isDatabaseUnavailable } from '../../../platform/databaseErrors';
import { ApiError, notEligible, notFound, threadBusy } from '../../../platform/errors';
import { requireOwnedThread } from '../../threads/repository';
import { cancelAwaitingTurn } from '../approval/suspend';
import type { HeadClaims } from '../claim/headClaim';
import type { RuntimeDriver } from '../driver/types';
import { toTurn } from '../dto';
import { pauseIfItemsWait } from '../queue/pause';
import type { QueueService } from '../queue/queueService';
import { listWaitingTurns } from '../queue/repository';
import { findActiveTurn, findTurn } from '../repository';
import type { TurnRunner } from '../running/runner';
import { type RecoveryDeps, settleOrphanedTurn } from '../settle/recovery';
import type { TurnStream } from '../stream/turnStream';

export interface InterruptDeps extends RecoveryDeps {
  runner: TurnRunner;
  /** Discards a stopped approval's suspended run. */
  driver: RuntimeDriver;
  claims: HeadClaims;
  /** Moves an item to the head for Send now / Stop & send with `moveToHead` (Q9). */
  queue: QueueService;
  /** How long an interrupt waits for the runner to release the thread. */
  interruptTimeoutMs?: number;
}

/** How often an interrupt re-reads the turn when no settle signal arrives. */
const SETTLE_RECHECK_MS = 250;

/** Stopping the running turn (S1-S3) and Stop & send (Q9, S4, S5). */
export class InterruptService {
  constructor(private readonly deps: InterruptDeps) {}

  /**
   * S1, S3: the person's Stop. With items waiting the queue pauses first (kept, never cancelled),
   * so no tab claims the next item once the slot is free; then the active turn is interrupted.
   * `queuePaused` says the queue is paused now (absent when nothing waits).
   */
  async stop(ownerId: string, threadId: string): Promise<{ turn: Turn | null; queuePaused?: true }> {
    const paused = await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      return await pauseIfItemsWait(tx, thread);
    });
    if (paused) await this.deps.signals.publish({ kind: 'queue.changed', threadId });
    const turn = await this.interruptOwned(threadId);
    return paused ? { turn, queuePaused: true } : { turn };
  }

  /**
   * S1: interrupts the active turn wherever it runs and returns once the thread's active slot is
   * free, with the settled turn (null when nothing was running). The queue is left as it is: this
   * is the stop of a thread being deleted or moved to another account, not the person's Stop.
   * A turn waiting for an approval has no runner: its request is cancelled here (H3).
   */
  async interrupt(ownerId: string, threadId: string): Promise<Turn | null> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    return await this.interruptOwned(threadId);
  }

  /**
   * `interrupt` once the caller has checked that the thread is the person's. `reached.stopped`
   * turns true once the stop has reached the reply (aborted here, or signalled to its instance):
   * from then on the reply ends whatever this call answers.
   */
  private async interruptOwned(
    threadId: string,
    reached = { stopped: false },
    known?: TurnRow,
  ): Promise<Turn | null> {
    const active = known ?? (await findActiveTurn(this.deps.db, threadId));
    if (!active) return null;
    if (active.status === 'awaiting_approval') return toTurn(await this.waitUntilSettled(active));
    if (this.deps.runner.abort(active.id)) {
      reached.stopped = true;
      // It runs here: its end is known without a round trip through the signal channel (bounded:
      // a turn settling while the database is away waits for it; the wait below then answers).
      await withinMs(this.deps.runner.finished(active.id), this.timeoutMs());
    } else {
      await this.deps.signals.publish({ kind: 'interrupt', threadId, turnId: active.id });
      reached.stopped = true;
    }
    return toTurn(await this.waitUntilSettled(active));
  }

  /**
   * Q9, S4: Send now on the head; when a turn is running, interrupt it first (Stop & send).
   * `moveToHead`: the item is moved to the head first (the Dock's "Stop & send this"), refused
   * with nothing changed when it cannot run next; then it goes on as on the head, with the same
   * handoff.
   */
  async sendNow(
    ownerId: string,
    threadId: string,
    turnId: string,
    options: { moveToHead?: boolean } = {},
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    const { db, claims } = this.deps;
    if (options.moveToHead) await this.deps.queue.moveToHead(ownerId, threadId, turnId);
    else await requireOwnedThread(db, threadId, ownerId);
    const [turn, [head], running] = await Promise.all([
      findTurn(db, threadId, turnId),
      listWaitingTurns(db, threadId),
      findActiveTurn(db, threadId),
    ]);
    if (!turn) throw notFound('turn');
    // A pending steer counts as the head too: stopping the reply requeues it there, then it runs.
    if (!inStatusGroup('waiting', turn.status)) throw new ApiError('not_queued');
    if (head?.id !== turnId) throw new ApiError('not_queue_head');
    // Every refusal the claim would give comes before anything is interrupted: a refusal changes
    // nothing. A failed head is resolved by Retry, Edit or Delete, never by Send now (Q11).
    if (head.status === 'failed') throw notEligible('head_failed');
    // Stop & send: stop the running reply first. The claim then runs the head with the handoff,
    // because it sees the branch's last settled turn interrupted (S5); if the reply finished on
    // its own meanwhile, nothing was cut off and the head runs as an ordinary turn.
    // Nothing running (the common Send now): the claim alone, with no lock taken for a pause.
    if (!running) return await claims.claim(ownerId, threadId, { turnId });
    const { active, paused } = await this.pauseBeforeStop(ownerId, threadId);
    if (!active || !paused) {
      if (active) await this.interruptOwned(threadId, undefined, active);
      return await claims.claim(ownerId, threadId, { turnId });
    }
    const reached = { stopped: false };
    try {
      await this.interruptOwned(threadId, reached, active);
      // An explicit choice to go on: the claim ends the pause in its own transaction (S3).
      return await claims.claim(ownerId, threadId, { turnId });
    } catch (error) {
      throw this.leftWaiting(threadId, error, reached.stopped);
    }
  }

  /**
   * F4: Stop & send begins as a Stop. With a reply running, the queue is paused first (the head
   * is waiting, so it pauses), under the thread lock, so that if the request cannot go on after
   * the reply was stopped (the database goes away, the stop outlasts its wait) the thread is left
   * exactly as after a Stop, and no viewer claim starts the head meanwhile; the answer then says
   * so (leftWaiting). Not announced: the claim that follows ends the pause, and other tabs would
   * only see it flicker. Returns the running turn as the lock saw it (none: it ended meanwhile)
   * and whether the queue is paused now.
   */
  private async pauseBeforeStop(
    ownerId: string,
    threadId: string,
  ): Promise<{ active: TurnRow | undefined; paused: boolean }> {
    return await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const active = await findActiveTurn(tx, threadId);
      return { active, paused: active !== undefined && (await pauseIfItemsWait(tx, thread)) };
    });
  }

  /**
   * F4: the answer of a Stop & send that paused the queue (and maybe stopped the reply) and then
   * could not claim: the refusal says what is so now (contracts StopAndSendLeftWaiting), and
   * other tabs hear of the pause once the database answers. A refusal that is not about the
   * database or the stop's wait (the head changed meanwhile, say) is passed on as it is.
   */
  private leftWaiting(threadId: string, error: unknown, replyStopped: boolean): unknown {
    const databaseAway =
      (error instanceof ApiError && error.code === 'unavailable') ||
      (!(error instanceof ApiError) && isDatabaseUnavailable(error));
    const timedOut = error instanceof ApiError && error.details?.reason === 'stop_timed_out';
    if (!databaseAway && !timedOut) return error;
    const left: StopAndSendLeftWaiting = replyStopped
      ? { queuePaused: true, replyStopped: true }
      : { queuePaused: true };
    // Not awaited: with the database away it could only fail after its connect timeout.
    void this.deps.signals.publish({ kind: 'queue.changed', threadId }).catch(() => {});
    if (timedOut)
      return new ApiError('thread_busy', (error as ApiError).message, {
        ...(error as ApiError).details,
        ...left,
      });
    return new ApiError(
      'unavailable',
      replyStopped ? refusalMessages.unavailable.stoppedNotSent : refusalMessages.unavailable.pausedNotSent,
      { ...left },
      { 'retry-after': '2' },
    );
  }

  private timeoutMs(): number {
    return this.deps.interruptTimeoutMs ?? 15_000;
  }

  /**
   * Waits for the turn's `turn.settled` signal (from whichever instance runs it) instead of polling
   * the row; a slow re-read covers a missed notification and a runner that died.
   */
  private async waitUntilSettled(turn: TurnRow): Promise<TurnRow> {
    const deadline = Date.now() + this.timeoutMs();
    // Kept when it arrives during a re-read (whose answer may predate the settle): the wait after
    // that read then ends at once instead of a whole recheck later.
    let settledSignal = false;
    let wake = () => {};
    const unsubscribe = this.deps.signals.subscribe((signal) => {
      if (signal.kind !== 'turn.settled' || signal.turnId !== turn.id) return;
      settledSignal = true;
      wake();
    });
    try {
      for (;;) {
        settledSignal = false;
        const current = await findTurn(this.deps.db, turn.threadId, turn.id);
        if (!current) throw notFound('turn');
        // It suspended for an approval as the interrupt arrived (or was waiting): cancel that.
        if (current.status === 'awaiting_approval') {
          const cancelled = await cancelAwaitingTurn(this.deps, current);
          if (cancelled) return cancelled;
          continue;
        }
        // Settled; a turn settling its reply is as good as ended but still holds the slot.
        if (!inStatusGroup('leased', current.status)) return current;
        // Its runner may be gone: settle it here rather than wait for the sweeper. The local clock
        // only decides when to ask; the database's clock decides (settleOrphanedTurn).
        if (current.leaseExpiresAt && current.leaseExpiresAt.getTime() <= Date.now()) {
          const settled = await settleOrphanedTurn(this.deps, current);
          if (settled) return settled;
        }
        if (Date.now() > deadline) throw threadBusy('stop_timed_out');
        // Heard while the row was being read: read it again now.
        if (settledSignal) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, SETTLE_RECHECK_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      unsubscribe();
    }
  }
}

/** Waits for `work` at most `ms`. */
async function withinMs(work: Promise<void> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
