import {
  fixedPlaceOf,
  inStatusGroup,
  type QueueItemAnswer,
  type QueuePlace,
  refusalMessages,
  type Turn,
  type TurnQueue,
} from '@chat/contracts';
import type { Database, Queryable, TurnRow } from '@chat/db';
import { commitOrSayUnsure } from '../../../platform/commitOutcome';
import { ApiError, notEligible, notFound } from '../../../platform/errors';
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
import { findTurn, findTurnByClientRequestId } from '../repository';
import { noAttempt, removeFailedAttempt } from './failedAttempt';
import { mergeWaitingTurns } from './merge';
import { endPauseOnceEmpty } from './pause';
import { frontPlace, moveWaitingTurn } from './reorder';
import { listWaitingTurns, requireWaitingTurn, updateWaitingTurnText } from './repository';
import { readTurnQueue } from './turnQueue';

export interface QueueDeps {
  db: Database;
  signals: Signals;
}

/**
 * The waiting items of a thread, as the Dock changes them (Q8, Q11, Q13, Q14): edit, delete, move,
 * merge, pause and resume. A pending steer is changed like any other item until the running reply takes it in.
 * Every change runs in a transaction that holds the thread's row lock (as steer delivery does),
 * so changes serialise per thread across instances, and every tab hears it (`queue.changed`, sent
 * with the writes and delivered at the commit). The answer (the item, the queue) is read in the
 * same transaction: nothing after the commit may turn a change that was stored into a refusal,
 * and one whose commit met an outage says so (`commitOrSayUnsure`: "reload to see whether it was").
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
    return await this.change(async (tx) => {
      const { turn } = await this.lockEditableTurn(tx, ownerId, threadId, turnId);
      const ids = input.attachmentIds;
      const attachments = ids ? await attachmentsForMessage(tx, threadId, ownerId, ids) : turn.attachments;
      if (turn.status === 'steer_pending' && attachments.length > 0) {
        return await this.changed(tx, await transitionTurn(tx, turn, 'queued', { text, attachments }));
      }
      if (turn.status !== 'failed') {
        const edited = await updateWaitingTurnText(tx, turn.id, text, attachments);
        await deleteUnreferencedAttachments(tx, threadId, attachmentIdsOfTurns([turn]));
        return await this.changed(tx, edited);
      }
      // Q11: an edited failed head replaces its failed attempt and waits to be claimed, first.
      await removeFailedAttempt(tx, turn);
      const front = await frontPlace(tx, threadId);
      const requeued = await transitionTurn(tx, turn, 'queued', {
        ...noAttempt,
        text,
        attachments,
        finishedAt: null,
        ...(front === undefined ? {} : { queuePosition: front }),
      });
      await deleteUnreferencedAttachments(tx, threadId, attachmentIdsOfTurns([turn]));
      return await this.changed(tx, requeued, { transcript: true });
    });
  }

  /**
   * Deletes a waiting item; a failed head's attempt leaves the transcript and the model's context.
   * The last item deleted ends a pause (S3): there is nothing left for it to hold.
   */
  async remove(
    ownerId: string,
    threadId: string,
    turnId: string,
  ): Promise<{ turn: Turn; turnQueue: TurnQueue }> {
    return await this.change(async (tx) => {
      const { thread, turn } = await this.lockEditableTurn(tx, ownerId, threadId, turnId);
      await removeFailedAttempt(tx, turn);
      // Its text goes with it (data hygiene): a cancelled row keeps only that it existed.
      const changes = { ...noAttempt, text: '', finishedAt: new Date() };
      const cancelled = await transitionTurn(tx, turn, 'cancelled', changes);
      await endPauseOnceEmpty(tx, thread);
      // Its images go too, unless another message of the thread carries them.
      await deleteUnreferencedAttachments(tx, threadId, attachmentIdsOfTurns([turn]));
      return await this.changed(tx, cancelled, { transcript: turn.status === 'failed' });
    });
  }

  /**
   * Q13: moves a waiting item just before or just after another (`reorder.ts` has the rules). Two
   * tabs moving at once take turns on the thread's lock; each move applies to the order the one
   * before it left.
   */
  async move(ownerId: string, threadId: string, turnId: string, place: QueuePlace): Promise<QueueItemAnswer> {
    return await this.change(async (tx) => {
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const { turn, changed } = await moveWaitingTurn(tx, threadId, turnId, place);
      return changed ? await this.changed(tx, turn) : await answerOf(tx, turn);
    });
  }

  /**
   * Q9: the first step of Send now / Stop & send with `moveToHead`: the item becomes the head.
   * Refused, changing nothing, when it cannot run next: a failed head blocks the queue (Q11), and
   * steers keep the front (Q13).
   */
  async moveToHead(ownerId: string, threadId: string, turnId: string): Promise<void> {
    await this.change(async (tx) => {
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const waiting = await listWaitingTurns(tx, threadId);
      const turn = await requireWaitingTurn(tx, threadId, waiting, turnId);
      const head = waiting[0] as typeof turn;
      if (head.id === turnId) return;
      const fixed = fixedPlaceOf(head);
      if (fixed) throw notEligible(fixed);
      const { changed } = await moveWaitingTurn(tx, threadId, turnId, 'front');
      if (changed) await this.deps.signals.publishWith(tx, { kind: 'queue.changed', threadId });
    });
  }

  /**
   * Q14: merges two or more waiting items into one at the place of the first (`merge.ts`). A retry
   * of the request (the same `clientRequestId`) answers the item it made and changes nothing.
   */
  async merge(
    ownerId: string,
    threadId: string,
    request: { clientRequestId: string; turnIds: string[] },
  ): Promise<QueueItemAnswer> {
    return await this.change(async (tx) => {
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const earlier = await findTurnByClientRequestId(tx, threadId, request.clientRequestId);
      if (earlier) return await answerOf(tx, earlier);
      return await this.changed(tx, await mergeWaitingTurns(tx, threadId, request));
    });
  }

  /** Pauses or resumes the queue; every tab hears it (`queue.changed`) and the Dock says so. */
  async setPaused(ownerId: string, threadId: string, paused: boolean): Promise<{ turnQueue: TurnQueue }> {
    return await this.change(async (tx) => {
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      await setQueuePaused(tx, threadId, paused);
      const [turnQueue] = await Promise.all([
        readTurnQueue(tx, threadId),
        this.deps.signals.publishWith(tx, { kind: 'queue.changed', threadId }),
      ]);
      return { turnQueue };
    });
  }

  private async lockEditableTurn(tx: Queryable, ownerId: string, threadId: string, turnId: string) {
    const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
    const turn = await findTurn(tx, threadId, turnId);
    if (!turn) throw notFound('turn');
    if (!inStatusGroup('editable', turn.status))
      throw new ApiError('not_queued', refusalMessages.not_queued.notWaiting);
    return { thread, turn };
  }

  /** One change of the queue, in a transaction whose commit meeting an outage says so. */
  private async change<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return await commitOrSayUnsure(this.deps.db, work);
  }

  /**
   * The answer to a change, and its signals, sent with the writes: `queue.changed`, and with
   * `transcript` (a failed attempt left it) `thread.changed`, so every tab reads it again.
   */
  private async changed(
    tx: Queryable,
    turn: TurnRow,
    options: { transcript?: boolean } = {},
  ): Promise<QueueItemAnswer> {
    const { threadId } = turn;
    const [answer] = await Promise.all([
      answerOf(tx, turn),
      this.deps.signals.publishWith(
        tx,
        ...(options.transcript ? [{ kind: 'thread.changed' as const, threadId }] : []),
        { kind: 'queue.changed', threadId },
      ),
    ]);
    return answer;
  }
}

/** The item and the queue as the transaction sees them. */
async function answerOf(tx: Queryable, turn: TurnRow): Promise<QueueItemAnswer> {
  return { turn: toTurn(turn), turnQueue: await readTurnQueue(tx, turn.threadId) };
}
