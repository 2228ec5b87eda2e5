import { type Attachment, inStatusGroup, type SendMode, type Turn, type TurnQueue } from '@chat/contracts';
import type { BranchRow, Database, Queryable, ThreadRow, TurnRow } from '@chat/db';
import { commitOrSayUnsure } from '../../../platform/commitOutcome';
import { InvariantError } from '../../../platform/errors';
import type { Signal, Signals } from '../../../platform/notifications';
import { StepTimes } from '../../../platform/serverTiming';
import { attachmentsForMessage } from '../../attachments/repository';
import { findActiveBranch } from '../../branches/repository';
import { activeBranchIdOf, requireOwnedThread, updateThread } from '../../threads/repository';
import { titleFromMessage } from '../../threads/title';
import { lastSettledTurnOnActiveBranch } from '../claim/repository';
import { toTurn } from '../dto';
import { insertTurn } from '../lifecycle';
import { validMessageText } from '../messageText';
import { admitSend, readAdmission } from '../queue/admission';
import { readTurnQueue } from '../queue/turnQueue';
import { findTurnByClientRequestId } from '../repository';
import type { TurnRunner } from '../running/runner';
import type { TurnStream } from '../stream/turnStream';

export interface AcceptanceDeps {
  db: Database;
  signals: Signals;
  runner: TurnRunner;
}

/** What an accepted turn answers: its reply stream (it runs now), or the turn and the queue. */
export type SendResult =
  | { kind: 'streaming'; turn: Turn; stream: TurnStream }
  | { kind: 'queued'; turn: Turn; turnQueue: TurnQueue }
  /** A retry of a send that is running on another instance or already finished. */
  | { kind: 'accepted'; turn: Turn; turnQueue: TurnQueue };

/** Who asks for a turn, on which thread, under which idempotency key (Q1). */
export interface TurnRequest {
  ownerId: string;
  threadId: string;
  clientRequestId: string;
}

/** How an accepted turn joins its thread, as its plan decided under the thread lock. */
export interface Joining {
  /** The branch it is recorded on, and runs on when it runs now. */
  branchId: string;
  /**
   * The branch row, as the plan read or wrote it. A turn that runs now starts on it: nothing after
   * the commit may read the database before the answer (E5), or an outage there would refuse a
   * turn that was recorded.
   */
  branch: BranchRow;
  /** The branch's last settled turn, when the plan read it with its own reads (S5's read). */
  lastSettled?: TurnRow | null;
  text: string;
  attachments: Attachment[];
  /** Runs now (claimed in this transaction), waits in the queue, or waits for the running reply's next step. */
  joins: 'run' | 'queue' | 'steer';
  /** Queued as a steer the running reply could not take in: its run gets the steer reminder. */
  steer?: boolean;
  /** A regenerate's own model (M3): the turn runs with it instead of the chat's. */
  requestedModel?: string;
  /** Thread columns written with the turn (its title, its shown version). */
  thread?: Partial<Pick<ThreadRow, 'title' | 'titled' | 'activeBranchId'>>;
  /** Other tabs must read the thread again (its title or its shown version changed). */
  announce?: boolean;
}

/**
 * A plan for accepting one kind of turn: a send, or a new version (an edit or a regenerate). Runs
 * under the thread lock, after the idempotency lookup found no earlier turn for the request.
 */
export interface TurnPlan<Reads = undefined> {
  /**
   * Reads the plan needs, by the thread's id alone: sent with the statement that locks the thread
   * (one round trip; they run once the lock is held, as a transaction's statements run in order),
   * and wasted only on a retried request.
   */
  read?(tx: Queryable, threadId: string): Promise<Reads>;
  /**
   * Decides how the turn joins and writes what must come first, all in `tx` (a rollback leaves
   * nothing of it); may refuse (nothing is recorded). `reads`: what `read` returned.
   */
  decide(tx: Queryable, thread: ThreadRow, reads: Reads): Promise<Joining>;
}

/**
 * Accepting a turn (Q1-Q4, B1, steer), for every way one is asked for. Recording the row is
 * acceptance: under the thread lock a retried `clientRequestId` finds its first turn and replays
 * its answer; otherwise the plan decides how the turn joins, the row is inserted (with the thread
 * columns that change with it) and, when it runs now, claimed in the same transaction. Once that
 * has committed, a claimed turn starts and answers its stream; a waiting one answers the queue.
 */
export class TurnAcceptance {
  constructor(private readonly deps: AcceptanceDeps) {}

  /**
   * A send: it runs at once when the thread is idle, else it waits in the queue (Q2-Q4). A steer
   * while a reply runs waits for that reply's next step (`steer_pending`; it counts toward the
   * cap); while the active turn waits for an approval nothing runs to take it in, so it is queued
   * as a steer (its run gets the reminder), and so is a steer carrying images, whose images reach
   * the model whole only in a run of its own.
   */
  async send(
    ownerId: string,
    threadId: string,
    input: { clientRequestId: string; text: string; mode?: SendMode; attachmentIds?: string[] },
    times?: StepTimes,
  ): Promise<SendResult> {
    const text = validMessageText(input.text);
    return await this.accept(
      { ownerId, threadId, clientRequestId: input.clientRequestId },
      {
        // With the lock: the admission's reads, the active branch and, in case the turn runs now,
        // the claim's S5 read, all named by the thread row.
        read: async (tx, id) => {
          const [admission, branch, lastSettled] = await Promise.all([
            readAdmission(tx, id),
            findActiveBranch(tx, id),
            lastSettledTurnOnActiveBranch(tx, id),
          ]);
          return { admission, branch, lastSettled };
        },
        decide: async (tx, thread, { admission, branch, lastSettled }) => {
          const branchId = activeBranchIdOf(thread);
          if (branch?.id !== branchId) throw new InvariantError(`thread ${threadId} lost its active branch`);
          const { idle, active } = admitSend(thread, admission);
          const attachments = await attachmentsForMessage(tx, threadId, ownerId, input.attachmentIds ?? []);
          const steer = input.mode === 'steer' && active !== undefined;
          const joins = idle
            ? 'run'
            : steer && active.status === 'running' && attachments.length === 0
              ? 'steer'
              : 'queue';
          return {
            branchId,
            branch,
            lastSettled: lastSettled ?? null,
            text,
            attachments,
            joins,
            steer,
            // The sidebar lists recent activity first; the first message names the thread.
            thread: thread.titled ? {} : { title: titleFromMessage(text), titled: true },
            announce: !thread.titled,
          };
        },
      },
      times,
    );
  }

  /**
   * Accepts one turn by `plan` (see the class). `times` gets its steps: `accept` (the
   * transaction), `claim` (within it), `start` (the run begun), `queue` (the queue read back).
   */
  async accept<Reads>(
    request: TurnRequest,
    plan: TurnPlan<Reads>,
    times = new StepTimes(),
  ): Promise<SendResult> {
    const { db, runner, signals } = this.deps;
    const { ownerId, threadId, clientRequestId } = request;
    const startedAt = performance.now();
    let claimMs = 0;
    const result = await commitOrSayUnsure(db, async (tx) => {
      // The lock, the idempotency lookup and the plan's reads go out together; the reads run once
      // the lock is held.
      const [thread, existing, reads] = await Promise.all([
        requireOwnedThread(tx, threadId, ownerId, { lock: true }),
        findTurnByClientRequestId(tx, threadId, clientRequestId),
        plan.read ? plan.read(tx, threadId) : (undefined as Reads),
      ]);
      if (existing) return { retry: true as const, turn: existing };
      const joining = await plan.decide(tx, thread, reads);
      const values = {
        threadId,
        branchId: joining.branchId,
        clientRequestId,
        text: joining.text,
        attachments: joining.attachments,
        ...(joining.requestedModel ? { requestedModel: joining.requestedModel } : {}),
      };
      const touchThread = updateThread(tx, threadId, joining.thread ?? {});
      // What other tabs hear of it goes out with the writes, delivered at the commit.
      const told = signals.publishWith(tx, ...signalsOf(threadId, joining));
      if (joining.joins === 'run') {
        // Recorded running at once: accepted and claimed in one write (claim/claim.ts).
        const claimStartedAt = performance.now();
        const [{ turn, reads }] = await Promise.all([
          runner.claimNew(
            tx,
            { ...values, steer: joining.steer ?? false },
            // The thread row is held locked since the transaction's first statement.
            { ownerId, lastSettled: joining.lastSettled, thread },
          ),
          touchThread,
          told,
        ]);
        claimMs = performance.now() - claimStartedAt;
        return { retry: false as const, turn, joining, reads };
      }
      // Under the lock, the two writes go out together: one round trip.
      const [turn] = await Promise.all([
        joining.joins === 'steer'
          ? insertTurn(tx, 'steer_pending', { ...values, steer: true })
          : insertTurn(tx, 'queued', { ...values, steer: joining.steer ?? false }),
        touchThread,
        told,
      ]);
      return { retry: false as const, turn, joining, reads: undefined };
    });
    times.add('accept', performance.now() - startedAt - claimMs);
    if (claimMs > 0) times.add('claim', claimMs);

    if (result.retry) return await this.replay(result.turn);
    // E5: the commit accepted the turn (its signals went out with it); nothing after it may turn
    // the answer into a refusal.
    const { turn, joining, reads } = result;
    if (joining.joins === 'run') {
      return {
        kind: 'streaming',
        turn: toTurn(turn),
        stream: await times.measure('start', () => runner.start(turn, ownerId, joining.branch, reads)),
      };
    }
    const turnQueue = await times.measure('queue', () => readTurnQueue(db, threadId));
    return { kind: 'queued', turn: toTurn(turn), turnQueue };
  }

  /** The answer to a retried clientRequestId (Q1): the first request's turn, as it stands now. */
  private async replay(turn: TurnRow): Promise<SendResult> {
    const stream = inStatusGroup('leased', turn.status) ? this.deps.runner.replyStream(turn.id) : undefined;
    if (stream) return { kind: 'streaming', turn: toTurn(turn), stream };
    const turnQueue = await readTurnQueue(this.deps.db, turn.threadId);
    return turn.status === 'queued' || turn.status === 'failed'
      ? { kind: 'queued', turn: toTurn(turn), turnQueue }
      : { kind: 'accepted', turn: toTurn(turn), turnQueue };
  }
}

/**
 * What an accepted turn tells every instance: the thread's title or shown version changed
 * (`announce`); a steer for the running reply; the queue grew. A turn that runs now announces
 * itself with its claim (`turn.started`, `TurnRunner.claimNew`), after these.
 */
function signalsOf(threadId: string, joining: Joining): Signal[] {
  const signals: Signal[] = joining.announce ? [{ kind: 'thread.changed', threadId }] : [];
  if (joining.joins === 'steer') signals.push({ kind: 'steer', threadId });
  if (joining.joins !== 'run') signals.push({ kind: 'queue.changed', threadId });
  return signals;
}
