import { QUEUE_CAPACITY, refusalMessages, type SendMode, type Turn, type TurnQueue } from '@chat/contracts';
import type { BranchRow, Database, Queryable, ThreadRow, TurnRow } from '@chat/db';
import type { ChatAgent } from '../../agent/chatAgent';
import { ApiError, InvariantError, notEligible, notFound } from '../../platform/errors';
import type { Signals } from '../../platform/notifications';
import {
  attachmentIdsOfTurns,
  attachmentsForMessage,
  deleteUnreferencedAttachments,
} from '../attachments/repository';
import { findBranch } from '../branches/repository';
import { requireOwnedThread, setQueuePaused, updateThread } from '../threads/repository';
import { titleFromMessage } from '../threads/title';
import { toTurn } from './dto';
import { noAttempt, removeFailedAttempt } from './failedAttempt';
import { validMessageText } from './guards';
import { insertTurn, transitionTurn } from './lifecycle';
import {
  findActiveTurn,
  findTurn,
  findTurnByClientRequestId,
  isEditable,
  listQueuedTurns,
  updateQueuedTurnText,
} from './repository';
import type { TurnRunner } from './runner';
import { insertPendingSteer } from './steerRepository';
import type { TurnStream } from './turnStream';
import { readTurnQueue } from './views';

export interface QueueDeps {
  db: Database;
  chatAgent: ChatAgent;
  signals: Signals;
  runner: TurnRunner;
}

export type SendResult =
  | { kind: 'streaming'; turn: Turn; stream: TurnStream }
  | { kind: 'queued'; turn: Turn; turnQueue: TurnQueue }
  /** A retry of a send that is running on another instance or already finished. */
  | { kind: 'accepted'; turn: Turn; turnQueue: TurnQueue };

/**
 * The queue of one thread (Q1-Q4, Q9-Q11): accepting sends, editing and deleting queued turns,
 * claiming the head, retrying a failed head. Every decision runs in a transaction that holds the thread's row lock, so
 * they serialise per thread across instances; the partial unique index on running turns is the
 * last line of defence for Q5.
 */
export class QueueService {
  constructor(private readonly deps: QueueDeps) {}

  /**
   * Q1-Q4: record the send (acceptance), then run it at once when idle or queue it. A steer while
   * a turn runs waits for that reply's next step (`steer_pending`; it counts toward the cap); while
   * the turn waits for an approval nothing runs to take it in, so it is queued (with the reminder).
   */
  async send(
    ownerId: string,
    threadId: string,
    input: { clientRequestId: string; text: string; mode?: SendMode; attachmentIds?: string[] },
  ): Promise<SendResult> {
    const text = validMessageText(input.text);
    const result = await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      // Under the lock, independent reads (and then writes) go out together: one round trip each.
      const [existing, active, queue, branch] = await Promise.all([
        findTurnByClientRequestId(tx, threadId, input.clientRequestId),
        findActiveTurn(tx, threadId),
        listQueuedTurns(tx, threadId),
        findBranch(tx, activeBranchOf(thread)),
      ]);
      if (existing) return { kind: 'retry' as const, turn: existing, named: false };
      // A paused queue claims nothing: the send waits in the queue like any other (Q6).
      const idle = !active && queue.length === 0 && !thread.queuePaused;
      if (!idle && queue.length >= QUEUE_CAPACITY) throw new ApiError('queue_full');
      const attachments = await attachmentsForMessage(tx, threadId, ownerId, input.attachmentIds ?? []);
      const values = {
        threadId,
        branchId: activeBranchOf(thread),
        clientRequestId: input.clientRequestId,
        text,
        attachments,
      };
      const steer = input.mode === 'steer' && active !== undefined;
      // A steer is folded in as text at a step boundary; one carrying images waits in the queue
      // (as a steer, so its turn gets the reminder) where its images reach the model whole.
      const [queued] = await Promise.all([
        steer && active.status === 'running' && attachments.length === 0
          ? insertPendingSteer(tx, values)
          : insertTurn(tx, 'queued', { ...values, steer }),
        // Touches the thread (the sidebar lists recent activity first) and names it after its first message.
        updateThread(tx, threadId, thread.titled ? {} : { title: titleFromMessage(text), titled: true }),
      ]);
      const turn = idle ? await this.deps.runner.claim(tx, queued, activeBranchOf(thread)) : queued;
      return { kind: idle ? ('claimed' as const) : ('queued' as const), turn, named: !thread.titled, branch };
    });

    if (result.kind === 'retry') return await this.replay(result.turn);
    if (result.named) await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    if (result.kind === 'claimed') return await this.startClaimed(result.turn, ownerId, result.branch);
    if (result.turn.status === 'steer_pending') await this.deps.signals.publish({ kind: 'steer', threadId });
    await this.deps.signals.publish({ kind: 'queue.changed', threadId });
    return {
      kind: 'queued',
      turn: toTurn(result.turn),
      turnQueue: await readTurnQueue(this.deps.db, threadId),
    };
  }

  /**
   * Q10: a viewer claims the queue head when the thread is idle and the queue is not paused
   * (`turnId`: only if it is the head; Send now, Stop & send and Retry name the head, so a pause
   * does not hold back the message the person asked for). Q11: a failed head blocks every claim
   * except a retry of it, which first removes the failed attempt from memory. The head runs on
   * the version shown now (B2).
   */
  async claimHead(
    ownerId: string,
    threadId: string,
    options: { turnId?: string; retry?: boolean } = {},
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    const { turn, retried } = await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      if (thread.queuePaused && !options.turnId) {
        throw notEligible('queue_paused');
      }
      const active = await findActiveTurn(tx, threadId);
      // Q12: a pending approval blocks the queue until a person decides (or stops the turn).
      if (active?.status === 'awaiting_approval') {
        throw notEligible('hitl_pending');
      }
      if (active) throw notEligible('turn_active');
      const [head] = await listQueuedTurns(tx, threadId);
      if (!head) throw notEligible('queue_empty');
      if (options.turnId && head.id !== options.turnId) throw new ApiError('not_queue_head');
      if (head.status === 'failed') {
        if (!options.retry) {
          throw notEligible('head_failed');
        }
        await removeFailedAttempt(this.deps.chatAgent.memory, head);
      }
      const turn = await this.deps.runner.claim(tx, head, activeBranchOf(thread));
      return { turn, retried: head.status === 'failed' };
    });
    // Other tabs drop the failed attempt from their transcript before they follow the new run.
    if (retried) await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    const { stream } = await this.startClaimed(turn, ownerId);
    return { turn: toTurn(turn), stream };
  }

  /**
   * Q11: Retry on a failed head runs the same text again at once, in place of the failed attempt.
   * A head that is merely queued (another tab edited it meanwhile) runs at once too, like Send now.
   */
  async retry(
    ownerId: string,
    threadId: string,
    turnId: string,
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    const turn = await findTurn(this.deps.db, threadId, turnId);
    if (!turn) throw notFound('turn');
    if (!isEditable(turn)) throw new ApiError('not_queued');
    return await this.claimHead(ownerId, threadId, { turnId, retry: true });
  }

  /** `attachmentIds`: the images it carries from now on; left out, it keeps its own. */
  async editQueued(
    ownerId: string,
    threadId: string,
    turnId: string,
    input: { text: string; attachmentIds?: string[] },
  ) {
    const text = validMessageText(input.text);
    const [before, turn] = await this.deps.db.transaction(async (tx) => {
      const turn = await this.lockQueuedTurn(tx, ownerId, threadId, turnId);
      const ids = input.attachmentIds;
      const attachments = ids ? await attachmentsForMessage(tx, threadId, ownerId, ids) : turn.attachments;
      if (turn.status === 'queued') {
        const edited = await updateQueuedTurnText(tx, turn.id, text, attachments);
        await deleteUnreferencedAttachments(tx, threadId, attachmentIdsOfTurns([turn]));
        return [turn, edited] as const;
      }
      // Q11: an edited failed head replaces its failed attempt and waits to be claimed.
      await removeFailedAttempt(this.deps.chatAgent.memory, turn);
      const requeued = await transitionTurn(tx, turn, 'queued', {
        ...noAttempt,
        text,
        attachments,
        finishedAt: null,
      });
      await deleteUnreferencedAttachments(tx, threadId, attachmentIdsOfTurns([turn]));
      return [turn, requeued] as const;
    });
    return await this.queueChanged(turn, before.status === 'failed');
  }

  /** Deletes a queued turn; a failed head's attempt leaves the transcript and the model's context. */
  async deleteQueued(ownerId: string, threadId: string, turnId: string) {
    const [before, turn] = await this.deps.db.transaction(async (tx) => {
      const turn = await this.lockQueuedTurn(tx, ownerId, threadId, turnId);
      await removeFailedAttempt(this.deps.chatAgent.memory, turn);
      // Its text goes with it (data hygiene): a cancelled row keeps only that it existed.
      const changes = { ...noAttempt, text: '', finishedAt: new Date() };
      const cancelled = await transitionTurn(tx, turn, 'cancelled', changes);
      // Its images go too, unless another message of the thread carries them.
      await deleteUnreferencedAttachments(tx, threadId, attachmentIdsOfTurns([turn]));
      return [turn, cancelled] as const;
    });
    return await this.queueChanged(turn, before.status === 'failed');
  }

  /** Pauses or resumes the queue; every tab hears it (`queue.changed`) and the Dock says so. */
  async setPaused(ownerId: string, threadId: string, paused: boolean): Promise<{ turnQueue: TurnQueue }> {
    await this.deps.db.transaction(async (tx) => {
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      await setQueuePaused(tx, threadId, paused);
    });
    await this.deps.signals.publish({ kind: 'queue.changed', threadId });
    return { turnQueue: await readTurnQueue(this.deps.db, threadId) };
  }

  /** The answer to a retried clientRequestId (Q1): the first send's turn, as it stands now. */
  async replay(turn: TurnRow): Promise<SendResult> {
    const stream = turn.status === 'running' ? this.deps.runner.replyStream(turn.id) : undefined;
    if (stream) return { kind: 'streaming', turn: toTurn(turn), stream };
    const turnQueue = await readTurnQueue(this.deps.db, turn.threadId);
    return turn.status === 'queued' || turn.status === 'failed'
      ? { kind: 'queued', turn: toTurn(turn), turnQueue }
      : { kind: 'accepted', turn: toTurn(turn), turnQueue };
  }

  /** Starts a turn claimed in a transaction that has committed. */
  async startClaimed(
    turn: TurnRow,
    ownerId: string,
    branch?: BranchRow,
  ): Promise<SendResult & { kind: 'streaming' }> {
    return {
      kind: 'streaming',
      turn: toTurn(turn),
      stream: await this.deps.runner.start(turn, ownerId, branch),
    };
  }

  private async lockQueuedTurn(tx: Queryable, ownerId: string, threadId: string, turnId: string) {
    await requireOwnedThread(tx, threadId, ownerId, { lock: true });
    const turn = await findTurn(tx, threadId, turnId);
    if (!turn) throw notFound('turn');
    if (!isEditable(turn)) throw new ApiError('not_queued', refusalMessages.not_queued.notWaiting);
    return turn;
  }

  /** Publishes the change; `transcriptChanged`: a failed attempt left it, so every tab refetches. */
  private async queueChanged(
    turn: TurnRow,
    transcriptChanged: boolean,
  ): Promise<{ turn: Turn; turnQueue: TurnQueue }> {
    if (transcriptChanged)
      await this.deps.signals.publish({ kind: 'thread.changed', threadId: turn.threadId });
    await this.deps.signals.publish({ kind: 'queue.changed', threadId: turn.threadId });
    return { turn: toTurn(turn), turnQueue: await readTurnQueue(this.deps.db, turn.threadId) };
  }
}

function activeBranchOf(thread: ThreadRow): string {
  if (!thread.activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
  return thread.activeBranchId;
}
