import { MAX_TEXT_LENGTH, type NotEligibleReason, QUEUE_CAPACITY, type TurnQueue } from '@chat/contracts';
import type { BranchRow, Database, Queryable, ThreadRow, TurnRow } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import { ApiError, InvariantError, notFound } from '../../platform/errors';
import type { Signals } from '../../platform/notifications';
import { findBranch, findOwnedThread, lockOwnedThread, updateThread } from '../threads/repository';
import { titleFromMessage } from '../threads/title';
import { toTurnQueue } from './dto';
import { type RecoveryDeps, settleOrphanedTurn } from './recovery';
import { remoteTurnStream } from './remoteTurnStream';
import {
  findActiveTurn,
  findTurn,
  findTurnByClientRequestId,
  insertQueuedTurn,
  isInQueue,
  leaseFromNow,
  listQueuedTurns,
  setHandoffRequested,
  transitionTurn,
  updateQueuedTurnText,
} from './repository';
import type { TurnRunner } from './runner';
import type { TurnStream } from './turnStream';

export interface TurnServiceDeps extends RecoveryDeps {
  db: Database;
  runner: TurnRunner;
  signals: Signals;
  runnerId: string;
  leaseMs: number;
  /** How long an interrupt waits for the runner to release the thread. */
  interruptTimeoutMs?: number;
}

export type SendResult =
  | { kind: 'streaming'; turn: TurnRow; stream: TurnStream }
  | { kind: 'queued'; turn: TurnRow; turnQueue: TurnQueue }
  /** A retry of a send that is running on another instance or already finished. */
  | { kind: 'accepted'; turn: TurnRow; turnQueue: TurnQueue };

/** Checks message text (1 to 32,000 characters after trimming) and returns it trimmed. */
export function validMessageText(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw new ApiError('bad_request', 'Message text is empty.');
  if (trimmed.length > MAX_TEXT_LENGTH) {
    throw new ApiError('too_large', `Message text is longer than ${MAX_TEXT_LENGTH} characters.`);
  }
  return trimmed;
}

/** How often an interrupt re-reads the turn when no settle signal arrives. */
const SETTLE_RECHECK_MS = 250;

/**
 * Turns and the queue of one thread (Q1-Q11, S1-S4). Every decision runs in a transaction that
 * holds the thread's row lock, so sends, claims and edits serialise per thread across instances;
 * the partial unique index on running turns is the last line of defence for Q5.
 */
export class TurnService {
  constructor(private readonly deps: TurnServiceDeps) {}

  async turnQueue(q: Queryable, threadId: string): Promise<TurnQueue> {
    return toTurnQueue(await findActiveTurn(q, threadId), await listQueuedTurns(q, threadId));
  }

  /** Q1-Q4: record the send (acceptance), then run it at once when idle or queue it. */
  async send(
    ownerId: string,
    threadId: string,
    input: { clientRequestId: string; text: string },
  ): Promise<SendResult> {
    const text = validMessageText(input.text);
    const result = await this.deps.db.transaction(async (tx) => {
      const { thread, existing } = await this.lockForSend(tx, ownerId, threadId, input.clientRequestId);
      if (existing) return { kind: 'retry' as const, turn: existing, named: false };
      const active = await findActiveTurn(tx, threadId);
      const queue = await listQueuedTurns(tx, threadId);
      const idle = !active && queue.length === 0;
      if (!idle && queue.length >= QUEUE_CAPACITY) {
        throw new ApiError('queue_full', `The queue already holds ${QUEUE_CAPACITY} messages.`);
      }
      const branchId = this.activeBranchOf(thread);
      const queued = await insertQueuedTurn(tx, {
        threadId,
        branchId,
        clientRequestId: input.clientRequestId,
        text,
      });
      await this.nameThreadAfterFirstMessage(tx, thread, text);
      const turn = idle ? await this.claim(tx, queued, false) : queued;
      return { kind: idle ? ('claimed' as const) : ('queued' as const), turn, named: !thread.titled };
    });

    if (result.kind === 'retry') return await this.replay(result.turn);
    if (result.named) await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    if (result.kind === 'claimed') {
      return { kind: 'streaming', turn: result.turn, stream: await this.startClaimed(result.turn, ownerId) };
    }
    await this.deps.signals.publish({ kind: 'queue.changed', threadId });
    return { kind: 'queued', turn: result.turn, turnQueue: await this.turnQueue(this.deps.db, threadId) };
  }

  /** Takes the thread lock for a send or an edit, and finds an earlier turn with the same request id (Q1). */
  private async lockForSend(tx: Queryable, ownerId: string, threadId: string, clientRequestId: string) {
    const thread = await lockOwnedThread(tx, threadId, ownerId);
    if (!thread) throw notFound();
    return { thread, existing: await findTurnByClientRequestId(tx, threadId, clientRequestId) };
  }

  /**
   * Starts a turn on a branch made for it (an edit into a new version, B1): under the thread lock,
   * refuses while anything runs or waits (thread_busy), lets `createBranch` make the branch, makes
   * it active and claims the turn at once. A retried clientRequestId replays the first answer.
   */
  async runOnNewBranch(
    ownerId: string,
    threadId: string,
    input: { clientRequestId: string; text: string },
    createBranch: (tx: Queryable, thread: ThreadRow, text: string) => Promise<string>,
  ): Promise<SendResult> {
    const text = validMessageText(input.text);
    const result = await this.deps.db.transaction(async (tx) => {
      const { thread, existing } = await this.lockForSend(tx, ownerId, threadId, input.clientRequestId);
      if (existing) return { turn: existing, retry: true };
      await this.assertIdle(tx, threadId);
      const branchId = await createBranch(tx, thread, text);
      await updateThread(tx, threadId, { activeBranchId: branchId });
      const turn = await insertQueuedTurn(tx, {
        threadId,
        branchId,
        clientRequestId: input.clientRequestId,
        text,
      });
      return { turn: await this.claim(tx, turn, false), retry: false };
    });
    if (result.retry) return await this.replay(result.turn);
    await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    return { kind: 'streaming', turn: result.turn, stream: await this.startClaimed(result.turn, ownerId) };
  }

  /**
   * Branch changes (edit, switch, delete) wait until the thread is quiet: nothing running, nothing
   * queued. Queued turns belong to the branch they were sent on, so the queue must drain (or be
   * cleared) before the person moves to another branch.
   */
  async assertIdle(q: Queryable, threadId: string): Promise<void> {
    if (await findActiveTurn(q, threadId)) {
      throw new ApiError(
        'thread_busy',
        'Wait for the reply to finish, or stop it, before changing versions.',
      );
    }
    if ((await listQueuedTurns(q, threadId)).length > 0) {
      throw new ApiError('thread_busy', 'Send or delete the queued messages before changing versions.');
    }
  }

  /** Q10: a viewer claims the queue head when the thread is idle. */
  async claimHead(ownerId: string, threadId: string, options: { handoff: boolean; turnId?: string }) {
    const turn = await this.deps.db.transaction(async (tx) => {
      const thread = await lockOwnedThread(tx, threadId, ownerId);
      if (!thread) throw notFound();
      const active = await findActiveTurn(tx, threadId);
      if (active) throw notEligible('turn_active', 'A turn is already running.');
      const [head] = await listQueuedTurns(tx, threadId);
      if (!head) throw notEligible('queue_empty', 'The queue is empty.');
      if (options.turnId && head.id !== options.turnId) {
        throw new ApiError('not_queue_head', 'Only the first queued message can be sent now.');
      }
      if (head.status === 'failed') {
        throw notEligible('head_failed', 'The first queued message failed; edit or delete it first.');
      }
      return await this.claim(tx, head, options.handoff || head.handoff);
    });
    return { turn, stream: await this.startClaimed(turn, ownerId) };
  }

  /** Q9, S4: Send now on the head; when a turn is running, interrupt it first (Stop & send). */
  async sendNow(ownerId: string, threadId: string, turnId: string) {
    const thread = await findOwnedThread(this.deps.db, threadId, ownerId);
    if (!thread) throw notFound();
    const turn = await findTurn(this.deps.db, threadId, turnId);
    if (!turn) throw notFound('Turn');
    if (!isInQueue(turn)) throw new ApiError('not_queued', 'This message is not in the queue.');
    const [head] = await listQueuedTurns(this.deps.db, threadId);
    if (head?.id !== turnId)
      throw new ApiError('not_queue_head', 'Only the first queued message can be sent now.');
    if (!(await findActiveTurn(this.deps.db, threadId))) {
      return await this.claimHead(ownerId, threadId, { handoff: false, turnId });
    }
    // Reserve the handoff on the head first: once the interrupt settles, another tab may claim
    // the head before this request does, and it must still run as the person's priority (S5).
    await setHandoffRequested(this.deps.db, turnId, true);
    let interrupted: TurnRow | null;
    try {
      interrupted = await this.interrupt(ownerId, threadId);
    } catch (error) {
      await setHandoffRequested(this.deps.db, turnId, false);
      throw error;
    }
    // The running reply may have finished on its own meanwhile: then nothing was cut off.
    const handoff = interrupted?.status === 'interrupted';
    if (!handoff) await setHandoffRequested(this.deps.db, turnId, false);
    return await this.claimHead(ownerId, threadId, { handoff, turnId });
  }

  /**
   * S1: interrupts the active turn wherever it runs and returns once the thread's active slot is
   * free, with the settled turn (null when nothing was running). Never touches the queue (S3).
   */
  async interrupt(ownerId: string, threadId: string): Promise<TurnRow | null> {
    const thread = await findOwnedThread(this.deps.db, threadId, ownerId);
    if (!thread) throw notFound();
    const active = await findActiveTurn(this.deps.db, threadId);
    if (!active) return null;
    if (!this.deps.runner.abort(active.id)) {
      await this.deps.signals.publish({ kind: 'interrupt', threadId, turnId: active.id });
    }
    return await this.waitUntilSettled(active);
  }

  async editQueued(ownerId: string, threadId: string, turnId: string, input: { text: string }) {
    const text = validMessageText(input.text);
    const turn = await this.deps.db.transaction(async (tx) => {
      const turn = await this.lockQueuedTurn(tx, ownerId, threadId, turnId);
      // Q11: editing a failed head makes it runnable again.
      const edited =
        turn.status === 'failed' ? await transitionTurn(tx, turn, 'queued', { error: null }) : turn;
      return await updateQueuedTurnText(tx, edited.id, text);
    });
    await this.deps.signals.publish({ kind: 'queue.changed', threadId });
    return { turn, turnQueue: await this.turnQueue(this.deps.db, threadId) };
  }

  async deleteQueued(ownerId: string, threadId: string, turnId: string) {
    const turn = await this.deps.db.transaction(async (tx) => {
      const turn = await this.lockQueuedTurn(tx, ownerId, threadId, turnId);
      return await transitionTurn(tx, turn, 'cancelled', { finishedAt: new Date() });
    });
    await this.deps.signals.publish({ kind: 'queue.changed', threadId });
    return { turn, turnQueue: await this.turnQueue(this.deps.db, threadId) };
  }

  /**
   * The stream of a running turn (what streamed so far, then live), or null when it has finished.
   * A turn running on another instance is followed through its checkpoints.
   */
  async attach(
    ownerId: string,
    threadId: string,
    turnId: string,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const thread = await findOwnedThread(this.deps.db, threadId, ownerId);
    if (!thread) throw notFound();
    const turn = await findTurn(this.deps.db, threadId, turnId);
    if (!turn) throw notFound('Turn');
    if (turn.status !== 'running') return null;
    return this.deps.runner.streamOf(turnId)?.subscribe() ?? remoteTurnStream(this.deps.db, threadId, turnId);
  }

  private async replay(turn: TurnRow): Promise<SendResult> {
    const stream = turn.status === 'running' ? this.deps.runner.streamOf(turn.id) : undefined;
    if (stream) return { kind: 'streaming', turn, stream };
    const turnQueue = await this.turnQueue(this.deps.db, turn.threadId);
    return turn.status === 'queued' || turn.status === 'failed'
      ? { kind: 'queued', turn, turnQueue }
      : { kind: 'accepted', turn, turnQueue };
  }

  private async claim(tx: Queryable, turn: TurnRow, handoff: boolean): Promise<TurnRow> {
    return await transitionTurn(tx, turn, 'running', {
      handoff,
      runnerId: this.deps.runnerId,
      leaseExpiresAt: leaseFromNow(this.deps.leaseMs),
      startedAt: new Date(),
      userMessageId: crypto.randomUUID(),
      assistantMessageId: null,
      partialText: '',
      error: null,
    });
  }

  private async startClaimed(turn: TurnRow, ownerId: string): Promise<TurnStream> {
    const branch = await this.branchOf(turn);
    const stream = this.deps.runner.start(turn, { branch, ownerId });
    await this.deps.signals.publish({ kind: 'turn.started', threadId: turn.threadId, turnId: turn.id });
    return stream;
  }

  private async branchOf(turn: TurnRow): Promise<BranchRow> {
    const branch = await findBranch(this.deps.db, turn.branchId);
    if (!branch) throw new InvariantError(`turn ${turn.id} has no branch`);
    return branch;
  }

  private activeBranchOf(thread: ThreadRow): string {
    if (!thread.activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
    return thread.activeBranchId;
  }

  private async lockQueuedTurn(tx: Queryable, ownerId: string, threadId: string, turnId: string) {
    const thread = await lockOwnedThread(tx, threadId, ownerId);
    if (!thread) throw notFound();
    const turn = await findTurn(tx, threadId, turnId);
    if (!turn) throw notFound('Turn');
    if (!isInQueue(turn)) throw new ApiError('not_queued', 'Only queued or failed messages can be changed.');
    return turn;
  }

  /** Touches the thread (the sidebar lists recent activity first) and names it after its first message. */
  private async nameThreadAfterFirstMessage(tx: Queryable, thread: ThreadRow, text: string): Promise<void> {
    await updateThread(tx, thread.id, thread.titled ? {} : { title: titleFromMessage(text), titled: true });
  }

  /**
   * Waits for the turn's `turn.settled` signal (from whichever instance runs it) instead of polling
   * the row; a slow re-read covers a missed notification and a runner that died.
   */
  private async waitUntilSettled(turn: TurnRow): Promise<TurnRow> {
    const deadline = Date.now() + (this.deps.interruptTimeoutMs ?? 15_000);
    let wake = () => {};
    const unsubscribe = this.deps.signals.subscribe((signal) => {
      if (signal.kind === 'turn.settled' && signal.turnId === turn.id) wake();
    });
    try {
      for (;;) {
        const current = await findTurn(this.deps.db, turn.threadId, turn.id);
        if (!current) throw notFound('Turn');
        if (current.status !== 'running') return current;
        // Its runner may be gone: settle it here rather than wait for the sweeper. The local clock
        // only decides when to ask; the database's clock decides (settleOrphanedTurn).
        if (current.leaseExpiresAt && current.leaseExpiresAt.getTime() <= Date.now()) {
          const settled = await settleOrphanedTurn(this.deps, current);
          if (settled) return settled;
        }
        if (Date.now() > deadline)
          throw new ApiError('thread_busy', 'The running turn did not stop in time; try again.');
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

function notEligible(reason: NotEligibleReason, message: string): ApiError {
  return new ApiError('not_eligible', message, { reason });
}
