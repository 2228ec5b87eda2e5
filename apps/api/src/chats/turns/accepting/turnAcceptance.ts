import { type Attachment, inStatusGroup, type SendMode, type Turn, type TurnQueue } from '@chat/contracts';
import type { BranchRow, Database, Queryable, ThreadRow, TurnRow } from '@chat/db';
import { CommitUnsure, commitOrSayUnsure } from '../../../platform/commitOutcome';
import type { Logger } from '../../../platform/logger';
import type { Signal, Signals } from '../../../platform/notifications';
import { attachmentsForMessage } from '../../attachments/repository';
import { findBranch } from '../../branches/repository';
import { activeBranchIdOf, requireOwnedThread, updateThread } from '../../threads/repository';
import { titleFromMessage } from '../../threads/title';
import { toTurn } from '../dto';
import { insertTurn } from '../lifecycle';
import { validMessageText } from '../messageText';
import { admitSend } from '../queue/admission';
import { readTurnQueue } from '../queue/turnQueue';
import { findTurnByClientRequestId } from '../repository';
import type { TurnRunner } from '../running/runner';
import type { TurnStream } from '../running/turnStream';

export interface AcceptanceDeps {
  db: Database;
  signals: Signals;
  runner: TurnRunner;
  logger: Logger;
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
  /** The branch row, when the plan read it (the runner would read it again otherwise). */
  branch?: BranchRow;
  text: string;
  attachments: Attachment[];
  /** Runs now (claimed in this transaction), waits in the queue, or waits for the running reply's next step. */
  joins: 'run' | 'queue' | 'steer';
  /** Queued as a steer the running reply could not take in: its run gets the steer reminder. */
  steer?: boolean;
  /** Thread columns written with the turn (its title, its shown version). */
  thread?: Partial<Pick<ThreadRow, 'title' | 'titled' | 'activeBranchId'>>;
  /** Other tabs must read the thread again (its title or its shown version changed). */
  announce?: boolean;
}

/**
 * A plan for accepting one kind of turn: a send, or a new version (an edit or a regenerate). Runs
 * under the thread lock, after the idempotency lookup found no earlier turn for the request.
 */
export interface TurnPlan {
  /** Decides how the turn joins and writes what must come first; may refuse (nothing is recorded). */
  decide(tx: Queryable, thread: ThreadRow): Promise<Joining>;
  /** The transaction rolled back: undoes what `decide` did outside the database. */
  rolledBack?(): Promise<void>;
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
  ): Promise<SendResult> {
    const text = validMessageText(input.text);
    return await this.accept(
      { ownerId, threadId, clientRequestId: input.clientRequestId },
      {
        decide: async (tx, thread) => {
          const branchId = activeBranchIdOf(thread);
          const [{ idle, active }, branch] = await Promise.all([
            admitSend(tx, thread),
            findBranch(tx, branchId),
          ]);
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
    );
  }

  /** Accepts one turn by `plan` (see the class). */
  async accept(request: TurnRequest, plan: TurnPlan): Promise<SendResult> {
    const { db, runner } = this.deps;
    const { ownerId, threadId, clientRequestId } = request;
    let result: { retry: true; turn: TurnRow } | { retry: false; turn: TurnRow; joining: Joining };
    try {
      result = await commitOrSayUnsure(db, async (tx) => {
        const thread = await requireOwnedThread(tx, threadId, ownerId, { lock: true });
        const existing = await findTurnByClientRequestId(tx, threadId, clientRequestId);
        if (existing) return { retry: true as const, turn: existing };
        const joining = await plan.decide(tx, thread);
        const values = {
          threadId,
          branchId: joining.branchId,
          clientRequestId,
          text: joining.text,
          attachments: joining.attachments,
        };
        // Under the lock, the two writes go out together: one round trip.
        const [recorded] = await Promise.all([
          joining.joins === 'steer'
            ? insertTurn(tx, 'steer_pending', { ...values, steer: true })
            : insertTurn(tx, 'queued', { ...values, steer: joining.steer ?? false }),
          updateThread(tx, threadId, joining.thread ?? {}),
        ]);
        if (joining.joins !== 'run') return { retry: false as const, turn: recorded, joining };
        // Read here, so nothing after the commit needs the database to start the run (E5).
        const [turn, branch] = await Promise.all([
          runner.claim(tx, recorded, joining.branchId),
          joining.branch ?? findBranch(tx, joining.branchId),
        ]);
        return { retry: false as const, turn, joining: { ...joining, branch } };
      });
    } catch (error) {
      // A commit that may have landed is not undone: its version's memory thread may be in use.
      if (!(error instanceof CommitUnsure)) await plan.rolledBack?.();
      throw error;
    }

    if (result.retry) return await this.replay(result.turn);
    // E5: the commit accepted the turn; nothing after it may turn the answer into a refusal. The
    // announcements are best-effort: other tabs and instances also find the change by reading.
    const { turn, joining } = result;
    if (joining.announce) await this.announce({ kind: 'thread.changed', threadId });
    if (joining.joins === 'run') {
      return {
        kind: 'streaming',
        turn: toTurn(turn),
        stream: await runner.start(turn, ownerId, joining.branch),
      };
    }
    if (joining.joins === 'steer') await this.announce({ kind: 'steer', threadId });
    await this.announce({ kind: 'queue.changed', threadId });
    return { kind: 'queued', turn: toTurn(turn), turnQueue: await readTurnQueue(db, threadId) };
  }

  private async announce(signal: Signal): Promise<void> {
    await this.deps.signals
      .publish(signal)
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, signal: signal.kind }, 'could not announce'),
      );
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
