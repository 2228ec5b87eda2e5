import { inStatusGroup, refusalMessages, type StopAndSendLeftWaiting, type Turn } from '@chat/contracts';
import type { TurnRow } from '@chat/db';
import { isDatabaseUnavailable } from '../../../platform/databaseErrors';
import { ApiError, notEligible, notFound, threadBusy } from '../../../platform/errors';
import type { Signal } from '../../../platform/notifications';
import { withinMs } from '../../../platform/withinMs';
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
import { SettleWatch } from './settleWatch';

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
   *
   * Few round trips, as it must answer while a burst of sends keeps the loop and the pool busy
   * (each await waits behind them): the lock, the queue and the active turn are read together, the
   * pause and an interrupt for another instance go out with the commit, and the settle is listened
   * for before the turn is read, so it is waited for, not read for first.
   */
  async stop(ownerId: string, threadId: string): Promise<{ turn: Turn | null; queuePaused?: true }> {
    const watch = new SettleWatch(this.deps.signals, threadId);
    try {
      const { paused, active, interruptSent } = await this.deps.db.transaction(async (tx) => {
        // One round trip: statements on one connection run in order, so the reads see the queue
        // and the active turn once the lock is held. Another person's thread fails the first;
        // what the others read of it is dropped.
        const [thread, waiting, active] = await Promise.all([
          requireOwnedThread(tx, threadId, ownerId, { lock: true }),
          listWaitingTurns(tx, threadId),
          findActiveTurn(tx, threadId),
        ]);
        const paused = await pauseIfItemsWait(tx, thread, waiting);
        // A reply another instance runs hears its interrupt when this commits (a turn is running
        // here or not: the lock is held, so it does not move meanwhile).
        const interruptSent =
          active !== undefined && active.status !== 'awaiting_approval' && !this.deps.runner.holds(active.id);
        const signals: Signal[] = [
          ...(paused ? [{ kind: 'queue.changed' as const, threadId }] : []),
          ...(active && interruptSent ? [{ kind: 'interrupt' as const, threadId, turnId: active.id }] : []),
        ];
        if (signals.length > 0) await this.deps.signals.publishWith(tx, ...signals);
        return { paused, active, interruptSent };
      });
      const turn = active
        ? await this.interruptOwned(threadId, { known: active, watch, interruptSent })
        : null;
      return paused ? { turn, queuePaused: true } : { turn };
    } finally {
      watch.close();
    }
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
   * from then on the reply ends whatever this call answers. `known`: the active turn as the caller
   * read it; `watch`: the caller's, listening since before that read (its settle is then waited
   * for, not read for first); `interruptSent`: its interrupt already went out to its instance.
   */
  private async interruptOwned(
    threadId: string,
    options: {
      reached?: { stopped: boolean };
      known?: TurnRow;
      watch?: SettleWatch;
      interruptSent?: boolean;
    } = {},
  ): Promise<Turn | null> {
    const { reached = { stopped: false }, known } = options;
    // Listening before the active turn is read here; a turn the caller read before it listened is
    // read again before any wait.
    const watch = options.watch ?? new SettleWatch(this.deps.signals, threadId);
    const readFirst = known !== undefined && options.watch === undefined;
    try {
      const active = known ?? (await findActiveTurn(this.deps.db, threadId));
      if (!active) return null;
      if (active.status === 'awaiting_approval') return toTurn(await this.waitUntilSettled(active, watch));
      if (!options.interruptSent && this.deps.runner.abort(active.id)) {
        reached.stopped = true;
        // It runs here: its end is known without a round trip through the signal channel (bounded:
        // a turn settling while the database is away waits for it; the wait below then answers).
        await withinMs(this.deps.runner.finished(active.id) ?? Promise.resolve(), this.timeoutMs());
        return toTurn(await this.waitUntilSettled(active, watch));
      }
      if (!options.interruptSent)
        await this.deps.signals.publish({ kind: 'interrupt', threadId, turnId: active.id });
      reached.stopped = true;
      return toTurn(await this.waitUntilSettled(active, watch, readFirst));
    } finally {
      if (!options.watch) watch.close();
    }
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
    const [turn, waiting, running] = await Promise.all([
      findTurn(db, threadId, turnId),
      listWaitingTurns(db, threadId),
      findActiveTurn(db, threadId),
    ]);
    if (!turn) throw notFound('turn');
    // Every refusal the claim would give comes before anything is interrupted: a refusal changes
    // nothing.
    requireSendableHead(waiting, turnId);
    // Stop & send: stop the running reply first. The claim then runs the head with the handoff,
    // because it sees the branch's last settled turn interrupted (S5); if the reply finished on
    // its own meanwhile, nothing was cut off and the head runs as an ordinary turn.
    // Nothing running (the common Send now): the claim alone, with no lock taken for a pause.
    if (!running) return await claims.claim(ownerId, threadId, { turnId });
    const { active, paused } = await this.pauseBeforeStop(ownerId, threadId, turnId);
    if (!active || !paused) {
      if (active) await this.interruptOwned(threadId, { known: active });
      return await claims.claim(ownerId, threadId, { turnId });
    }
    const reached = { stopped: false };
    try {
      await this.interruptOwned(threadId, { reached, known: active });
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
   *
   * The head is checked again under the lock, before anything changes: the reads before it took
   * no lock, and another tab's claim may have started this very message since (the reply running
   * now is then the one asked for, and stopping it would cut off what was asked to run).
   */
  private async pauseBeforeStop(
    ownerId: string,
    threadId: string,
    turnId: string,
  ): Promise<{ active: TurnRow | undefined; paused: boolean }> {
    return await this.deps.db.transaction(async (tx) => {
      // One round trip, as in `stop`: the reads run once the lock is held.
      const [thread, active, waiting] = await Promise.all([
        requireOwnedThread(tx, threadId, ownerId, { lock: true }),
        findActiveTurn(tx, threadId),
        listWaitingTurns(tx, threadId),
      ]);
      requireSendableHead(waiting, turnId);
      return { active, paused: active !== undefined && (await pauseIfItemsWait(tx, thread, waiting)) };
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
   * Waits for the turn's `turn.settled` signal (from whichever instance runs it, heard by `watch`)
   * instead of polling the row; a slow re-read covers a missed notification and a runner that
   * died. `readFirst: false`: the turn was read while `watch` listened, so its settle is waited for
   * before the first read (heard already, the wait ends at once).
   */
  private async waitUntilSettled(turn: TurnRow, watch: SettleWatch, readFirst = true): Promise<TurnRow> {
    const deadline = Date.now() + this.timeoutMs();
    if (!readFirst) await watch.wait(SETTLE_RECHECK_MS);
    for (;;) {
      // A settle heard from here on wakes the wait below at once (the read may predate it).
      watch.reset();
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
      await watch.wait(SETTLE_RECHECK_MS);
    }
  }
}

/**
 * Send now runs only the queue's head (`waiting`, in queue order), and not a failed one: a failed
 * head is resolved by Retry, Edit or Delete, never by Send now (Q11). A pending steer counts as the
 * head too: stopping the reply requeues it there, then it runs.
 */
function requireSendableHead(waiting: readonly TurnRow[], turnId: string): void {
  const [head] = waiting;
  if (!waiting.some((item) => item.id === turnId)) throw new ApiError('not_queued');
  if (head?.id !== turnId) throw new ApiError('not_queue_head');
  if (head.status === 'failed') throw notEligible('head_failed');
}
