import {
  hasVisibleText,
  MAX_TEXT_LENGTH,
  type NotEligibleReason,
  QUEUE_CAPACITY,
  type Turn,
  type TurnQueue,
} from '@chat/contracts';
import type { Database, Queryable, ThreadRow, TurnRow } from '@chat/db';
import { ApiError, InvariantError, notFound } from '../../platform/errors';
import type { Signals } from '../../platform/notifications';
import { requireOwnedThread, updateThread } from '../threads/repository';
import { titleFromMessage } from '../threads/title';
import { toTurn } from './dto';
import {
  findActiveTurn,
  findTurn,
  findTurnByClientRequestId,
  insertQueuedTurn,
  isInQueue,
  listQueuedTurns,
  transitionTurn,
  updateQueuedTurnText,
} from './repository';
import type { TurnRunner } from './runner';
import type { TurnStream } from './turnStream';
import { readTurnQueue } from './views';

export interface QueueDeps {
  db: Database;
  signals: Signals;
  runner: TurnRunner;
}

export type SendResult =
  | { kind: 'streaming'; turn: Turn; stream: TurnStream }
  | { kind: 'queued'; turn: Turn; turnQueue: TurnQueue }
  /** A retry of a send that is running on another instance or already finished. */
  | { kind: 'accepted'; turn: Turn; turnQueue: TurnQueue };

/**
 * Checks message text (1 to 32,000 characters after trimming, some of them visible: a zero-width
 * space alone is empty) and returns it trimmed.
 */
export function validMessageText(text: string): string {
  const trimmed = text.trim();
  if (!hasVisibleText(trimmed)) throw new ApiError('bad_request', 'Message text is empty.');
  if (trimmed.length > MAX_TEXT_LENGTH) {
    throw new ApiError('too_large', `Message text is longer than ${MAX_TEXT_LENGTH} characters.`);
  }
  return trimmed;
}

/**
 * Branch changes (edit, switch, delete) wait until the thread is quiet: nothing running, nothing
 * queued. Queued turns belong to the branch they were sent on, so the queue must drain (or be
 * cleared) before the person moves to another branch.
 */
export async function assertIdle(q: Queryable, threadId: string): Promise<void> {
  if (await findActiveTurn(q, threadId)) {
    throw new ApiError('thread_busy', 'Wait for the reply to finish, or stop it, before changing versions.');
  }
  if ((await listQueuedTurns(q, threadId)).length > 0) {
    throw new ApiError('thread_busy', 'Send or delete the queued messages before changing versions.');
  }
}

/**
 * The queue of one thread (Q1-Q4, Q9-Q11): accepting sends, editing and deleting queued turns,
 * claiming the head. Every decision runs in a transaction that holds the thread's row lock, so
 * they serialise per thread across instances; the partial unique index on running turns is the
 * last line of defence for Q5.
 */
export class QueueService {
  constructor(private readonly deps: QueueDeps) {}

  /** Q1-Q4: record the send (acceptance), then run it at once when idle or queue it. */
  async send(
    ownerId: string,
    threadId: string,
    input: { clientRequestId: string; text: string },
  ): Promise<SendResult> {
    const text = validMessageText(input.text);
    const result = await this.deps.db.transaction(async (tx) => {
      const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const existing = await findTurnByClientRequestId(tx, threadId, input.clientRequestId);
      if (existing) return { kind: 'retry' as const, turn: existing, named: false };
      const active = await findActiveTurn(tx, threadId);
      const queue = await listQueuedTurns(tx, threadId);
      const idle = !active && queue.length === 0;
      if (!idle && queue.length >= QUEUE_CAPACITY) throw new ApiError('queue_full');
      const queued = await insertQueuedTurn(tx, {
        threadId,
        branchId: activeBranchOf(thread),
        clientRequestId: input.clientRequestId,
        text,
      });
      // Touches the thread (the sidebar lists recent activity first) and names it after its first message.
      await updateThread(tx, threadId, thread.titled ? {} : { title: titleFromMessage(text), titled: true });
      const turn = idle ? await this.deps.runner.claim(tx, queued, false) : queued;
      return { kind: idle ? ('claimed' as const) : ('queued' as const), turn, named: !thread.titled };
    });

    if (result.kind === 'retry') return await this.replay(result.turn);
    if (result.named) await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    if (result.kind === 'claimed') return await this.startClaimed(result.turn, ownerId);
    await this.deps.signals.publish({ kind: 'queue.changed', threadId });
    return {
      kind: 'queued',
      turn: toTurn(result.turn),
      turnQueue: await readTurnQueue(this.deps.db, threadId),
    };
  }

  /** Q10: a viewer claims the queue head when the thread is idle (`turnId`: only if it is the head). */
  async claimHead(
    ownerId: string,
    threadId: string,
    options: { handoff: boolean; turnId?: string },
  ): Promise<{ turn: Turn; stream: TurnStream }> {
    const turn = await this.deps.db.transaction(async (tx) => {
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const active = await findActiveTurn(tx, threadId);
      if (active) throw notEligible('turn_active', 'A turn is already running.');
      const [head] = await listQueuedTurns(tx, threadId);
      if (!head) throw notEligible('queue_empty', 'The queue is empty.');
      if (options.turnId && head.id !== options.turnId) throw new ApiError('not_queue_head');
      if (head.status === 'failed') {
        throw notEligible('head_failed', 'The first queued message failed; edit or delete it first.');
      }
      return await this.deps.runner.claim(tx, head, options.handoff || head.handoff);
    });
    const { stream } = await this.startClaimed(turn, ownerId);
    return { turn: toTurn(turn), stream };
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
    return await this.queueChanged(turn);
  }

  async deleteQueued(ownerId: string, threadId: string, turnId: string) {
    const turn = await this.deps.db.transaction(async (tx) => {
      const turn = await this.lockQueuedTurn(tx, ownerId, threadId, turnId);
      return await transitionTurn(tx, turn, 'cancelled', { finishedAt: new Date() });
    });
    return await this.queueChanged(turn);
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
  async startClaimed(turn: TurnRow, ownerId: string): Promise<SendResult & { kind: 'streaming' }> {
    return { kind: 'streaming', turn: toTurn(turn), stream: await this.deps.runner.start(turn, ownerId) };
  }

  private async lockQueuedTurn(tx: Queryable, ownerId: string, threadId: string, turnId: string) {
    await requireOwnedThread(tx, threadId, ownerId, { lock: true });
    const turn = await findTurn(tx, threadId, turnId);
    if (!turn) throw notFound('Turn');
    if (!isInQueue(turn)) throw new ApiError('not_queued', 'Only queued or failed messages can be changed.');
    return turn;
  }

  private async queueChanged(turn: TurnRow): Promise<{ turn: Turn; turnQueue: TurnQueue }> {
    await this.deps.signals.publish({ kind: 'queue.changed', threadId: turn.threadId });
    return { turn: toTurn(turn), turnQueue: await readTurnQueue(this.deps.db, turn.threadId) };
  }
}

function activeBranchOf(thread: ThreadRow): string {
  if (!thread.activeBranchId) throw new InvariantError(`thread ${thread.id} has no active branch`);
  return thread.activeBranchId;
}

function notEligible(reason: NotEligibleReason, message: string): ApiError {
  return new ApiError('not_eligible', message, { reason });
}
