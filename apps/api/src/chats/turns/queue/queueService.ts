import { inStatusGroup, refusalMessages, type Turn, type TurnQueue } from '@chat/contracts';
import type { Database, Queryable, TurnRow } from '@chat/db';
import type { Memory } from '@mastra/memory';
import { ApiError, notFound } from '../../../platform/errors';
import type { Signals } from '../../../platform/notifications';
import {
  attachmentIdsOfTurns,
  attachmentsForMessage,
  deleteUnreferencedAttachments,
} from '../../attachments/repository';
import { requireOwnedThread, setQueuePaused } from '../../threads/repository';
import { toTurn } from '../dto';
import { transitionTurn } from '../lifecycle';
import { validMessageText } from '../messageText';
import { findTurn } from '../repository';
import { noAttempt, removeFailedAttempt } from './failedAttempt';
import { updateWaitingTurnText } from './repository';
import { readTurnQueue } from './turnQueue';

export interface QueueDeps {
  db: Database;
  memory: Memory;
  signals: Signals;
}

/**
 * The waiting items of a thread, as the Dock changes them (Q8, Q11): edit, delete, pause and
 * resume. A pending steer is changed like any other item until the running reply takes it in.
 * Every change runs in a transaction that holds the thread's row lock (as steer delivery does),
 * so changes serialise per thread across instances, and every tab hears it (`queue.changed`).
 */
export class QueueService {
  constructor(private readonly deps: QueueDeps) {}

  /**
   * `attachmentIds`: the images it carries from now on; left out, it keeps its own. A pending steer
   * given images waits in the queue as a steer instead (its images reach the model whole only in
   * a run of its own, as with a steer sent with images).
   */
  async edit(
    ownerId: string,
    threadId: string,
    turnId: string,
    input: { text: string; attachmentIds?: string[] },
  ): Promise<{ turn: Turn; turnQueue: TurnQueue }> {
    const text = validMessageText(input.text);
    const [before, turn] = await this.deps.db.transaction(async (tx) => {
      const turn = await this.lockEditableTurn(tx, ownerId, threadId, turnId);
      const ids = input.attachmentIds;
      const attachments = ids ? await attachmentsForMessage(tx, threadId, ownerId, ids) : turn.attachments;
      if (turn.status === 'steer_pending' && attachments.length > 0) {
        const queued = await transitionTurn(tx, turn, 'queued', { text, attachments });
        return [turn, queued] as const;
      }
      if (turn.status !== 'failed') {
        const edited = await updateWaitingTurnText(tx, turn.id, text, attachments);
        await deleteUnreferencedAttachments(tx, threadId, attachmentIdsOfTurns([turn]));
        return [turn, edited] as const;
      }
      // Q11: an edited failed head replaces its failed attempt and waits to be claimed.
      await removeFailedAttempt(this.deps.memory, turn);
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

  /** Deletes a waiting item; a failed head's attempt leaves the transcript and the model's context. */
  async remove(
    ownerId: string,
    threadId: string,
    turnId: string,
  ): Promise<{ turn: Turn; turnQueue: TurnQueue }> {
    const [before, turn] = await this.deps.db.transaction(async (tx) => {
      const turn = await this.lockEditableTurn(tx, ownerId, threadId, turnId);
      await removeFailedAttempt(this.deps.memory, turn);
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

  private async lockEditableTurn(tx: Queryable, ownerId: string, threadId: string, turnId: string) {
    await requireOwnedThread(tx, threadId, ownerId, { lock: true });
    const turn = await findTurn(tx, threadId, turnId);
    if (!turn) throw notFound('turn');
    if (!inStatusGroup('editable', turn.status))
      throw new ApiError('not_queued', refusalMessages.not_queued.notWaiting);
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
