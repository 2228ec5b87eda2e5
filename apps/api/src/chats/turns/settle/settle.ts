import { type TokenUsage, turnErrorMessages } from '@chat/contracts';
import type { Database, Queryable, SettleOutcome, ThreadRow, TurnRow } from '@chat/db';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import {
  afterNewest,
  planTurnMessages,
  type TurnMessages,
  writeTurnMessages,
} from '../../branches/transcript';
import { lockThread } from '../../threads/repository';
import { transcriptTables } from '../../transcript/tables';
import type { StoredMessage } from '../../transcript/transcriptStore';
import { insertTokenCounts } from '../context/repository';
import type { TokenCount } from '../context/window';
import type { SteerMessage } from '../driver/types';
import { endTurn, transitionTurn } from '../lifecycle';
import type { ReplyRecord } from '../replyRecord';
import { findTurn } from '../repository';
import { listSteersDeliveredInto, requeueSteers, steerMessageOf } from '../steer/repository';

/** How a running turn ends. */
export interface Settlement {
  status: SettleOutcome;
  error: string | null;
  /** The reply as stored in memory (null when there is none). */
  assistantMessageId: string | null;
  /** The runtime driver's newest resume token, kept with the final reply (failed turns too). */
  resumeToken?: string | null;
  /** The reply's token usage as the model reported it (C1). */
  usage?: TokenUsage | null;
}

/**
 * The one way a turn a runner held (running, or settling its reply) ends, for its runner and for
 * crash recovery alike. Under the thread lock (so concurrent settlers run one after the other),
 * `current` re-reads the turn and returns it only if it is still this settler's to end; `decide`
 * then says how it ends, once its messages are in memory (it writes what is missing first). The
 * turn leaves the active slot, its checkpoint goes (memory holds the reply now), and once
 * committed every instance hears `turn.settled`. Returns null when there was nothing (left) to
 * settle.
 */
export async function settleTurn(
  deps: { db: Database; signals: Signals; logger: Logger },
  threadId: string,
  current: (tx: Queryable) => Promise<TurnRow | undefined>,
  decide: (tx: Queryable, turn: TurnRow, thread: ThreadRow) => Promise<Settlement>,
  tokenCounts: readonly TokenCount[] = [],
): Promise<TurnRow | null> {
  const settled = await deps.db.transaction(async (tx) => {
    // The lock and the re-read go out together (one round trip); the re-read runs once the lock
    // is held, as statements on one connection run in the order they were sent. The token counts
    // of the messages the reply's store wrote go first, before the lock: a window measure (one
    // statement, holding nothing) may write the same counts, and its foreign-key check waits for
    // this lock; written after it, each would wait on the other (a deadlock). Derived and written
    // once by key, they stay whatever comes of the settle.
    const [, thread, held] = await Promise.all([
      insertTokenCounts(tx, tokenCounts),
      lockThread(tx, threadId),
      current(tx),
    ]);
    const turn = thread ? held : undefined;
    if (!thread || !turn) return null;
    const { status, ...changes } = await decide(tx, turn, thread);
    return await endUnderLock(deps, tx, { turn, thread, status, changes });
  });
  return settled;
}

/**
 * The end of a settle, under the thread lock, in one round trip of statements that do not depend
 * on each other (`before`, the reply's own writes when the settle stores it, go first: they are
 * sent first, and statements on one connection run in the order they were sent):
 * - Steers no run took in go to the head of the queue as the turn ends (the reference's
 *   steer-undelivered), in this transaction: none is ever left pending without an active turn.
 * - Its user message is stored by now: the lineage row that versions are found by. So are the
 *   steers it took in (user messages of their own), read here (or before, `delivered`) and written
 *   next (most turns took none: no further round trip).
 * - The turn ends, and every instance hears it at the commit.
 */
async function endUnderLock(
  deps: { signals: Signals },
  tx: Queryable,
  end: {
    turn: TurnRow;
    thread: ThreadRow;
    status: SettleOutcome;
    changes: Omit<Settlement, 'status'>;
    before?: Promise<unknown>;
    delivered?: TurnRow[];
  },
): Promise<TurnRow> {
  const { turn, thread, status, changes } = end;
  const threadId = turn.threadId;
  const [, , , delivered, ended] = await Promise.all([
    end.before,
    requeueSteers(tx, threadId),
    turn.userMessageId
      ? transcriptTables.writeUserMessageLineage(tx, turn.branchId, turn.userMessageId)
      : undefined,
    end.delivered ?? listSteersDeliveredInto(tx, turn),
    endTurn(tx, turn, status, { ...changes, finishedAt: new Date() }),
    announceSettled(deps, tx, turn, thread),
  ]);
  await Promise.all(
    delivered.flatMap((steer) =>
      steer.userMessageId
        ? [transcriptTables.writeUserMessageLineage(tx, turn.branchId, steer.userMessageId)]
        : [],
    ),
  );
  return ended;
}

/**
 * `turn.settled`, sent with the transaction that settles the turn: PostgreSQL delivers it to every
 * instance when that commits (never after a rollback), and it goes out with the transaction's last
 * statements instead of a statement and a round trip of its own after the commit. It says whether
 * the chat drains in the background, as `thread` (locked by this transaction) has it.
 */
async function announceSettled(
  deps: { signals: Signals },
  tx: Queryable,
  turn: TurnRow,
  thread: ThreadRow,
): Promise<void> {
  await deps.signals.publishWith(tx, {
    kind: 'turn.settled',
    threadId: turn.threadId,
    turnId: turn.id,
    // Read under the lock this transaction holds: the drain needs no read of its own for a chat a
    // viewer drains (most), and a change of the choice after the commit is announced by itself.
    background: thread.drainMode === 'background',
  });
}

/**
 * F1: the way a turn ends whose settle kept failing for a reason other than an outage
 * (`SettleRetry` gave up): `failed`, in one small transaction that writes nothing but the turn row
 * (and steers no run took in back to the queue, as every end does), so it does not meet again
 * what failed the settle. What the reply had is kept on the row (`keep`: the runner's record;
 * left out, what the row holds already): nothing a person saw is lost, and Retry runs it again
 * (Q11). The thread's active slot is free once committed; every instance hears `turn.settled`.
 * `current` re-reads the turn under the thread lock, as for `settleTurn`. Null when there was
 * nothing (left) to end.
 */
export async function failUnsettledTurn(
  deps: { db: Database; signals: Signals; logger: Logger },
  threadId: string,
  current: (tx: Queryable) => Promise<TurnRow | undefined>,
  keep?: ReplyRecord,
): Promise<TurnRow | null> {
  const failed = await deps.db.transaction(async (tx) => {
    const thread = await lockThread(tx, threadId);
    const turn = thread ? await current(tx) : undefined;
    if (!thread || !turn) return null;
    await requeueSteers(tx, threadId);
    const [ended] = await Promise.all([
      transitionTurn(tx, turn, 'failed', {
        error: turnErrorMessages.notSaved,
        ...(keep
          ? {
              assistantMessageId: keep.currentId,
              partialText: keep.currentText,
              partialParts: keep.snapshot(),
            }
          : {}),
        outcome: null,
        leaseExpiresAt: null,
        finishedAt: new Date(),
      }),
      announceSettled(deps, tx, turn, thread),
    ]);
    return ended;
  });
  return failed;
}

/** This runner's turn, while it still holds it (running, or settling its reply). */
export async function heldBy(tx: Queryable, turn: TurnRow, runnerId: string): Promise<TurnRow | undefined> {
  const current = await findTurn(tx, turn.threadId, turn.id);
  const held = current?.status === 'running' || current?.status === 'settling';
  return held && current.runnerId === runnerId ? current : undefined;
}

/** How a run its runner ended settles: how it ended, and its messages to make sure of. */
export interface RunSettlement {
  status: SettleOutcome;
  error: string | null;
  /** The runtime driver's newest resume token, kept with the final reply (failed turns too). */
  resumeToken: string | null;
  /** The reply's token usage as the model reported it (C1). */
  usage?: TokenUsage;
  /**
   * The turn's messages (its user message and the reply, `TurnMessages`), given the steers the
   * database says it took in: ones the reply does not hold go after it (`ReplyRecord.appendSteers`).
   */
  messages: (steers: Array<SteerMessage & { at: Date | null }>) => TurnMessages;
  /**
   * Token counts of the messages the settle will write when none of them is stored yet (C2), sent
   * with the lock: see `settleTurn`. Left out when what the settle writes is known only once it
   * read what is stored (a driver that saves its own messages).
   */
  tokenCounts?: readonly TokenCount[];
}

/**
 * Settles a turn its runner (`runnerId`) ran to an end, and makes sure of its messages in memory
 * in the same transaction (`planTurnMessages`): what is stored of them is read with the lock, the
 * missing ones written with the turn's end, so the turn is never done without its messages and
 * the reply costs no round trip or commit of its own. The steers the turn took in are read under
 * the lock too: the reply is stored with exactly those. Null when the turn is no longer this
 * runner's (recovery settled it after its lease ran out); else the turn as it ended, the reply's
 * id as stored and the messages written.
 */
export async function settleRun(
  deps: { db: Database; signals: Signals; logger: Logger; runnerId: string },
  turn: TurnRow,
  run: RunSettlement,
  where: { memoryThreadId: string; userMessageId: string },
): Promise<{ turn: TurnRow; replyId: string | null; written: StoredMessage[] } | null> {
  return await deps.db.transaction(async (tx) => {
    // As `settleTurn`: the counts before the lock, the reads after it, in one round trip.
    const [, thread, held, stored, delivered] = await Promise.all([
      insertTokenCounts(tx, run.tokenCounts ?? []),
      lockThread(tx, turn.threadId),
      heldBy(tx, turn, deps.runnerId),
      transcriptTables.readMessagesFrom(tx, where.memoryThreadId, where.userMessageId),
      listSteersDeliveredInto(tx, turn),
    ]);
    if (!thread || !held) return null;
    const messages = run.messages(
      delivered.flatMap((steer) => {
        const message = steerMessageOf(steer);
        return message ? [{ ...message, at: steer.startedAt }] : [];
      }),
    );
    const plan = planTurnMessages(messages, stored);
    const [ended] = await Promise.all([
      endUnderLock(deps, tx, {
        turn: held,
        thread,
        status: run.status,
        changes: {
          error: run.error,
          assistantMessageId: plan.replyId,
          resumeToken: run.resumeToken,
          ...(run.usage ? { usage: run.usage } : {}),
        },
        before: writeTurnMessages(tx, messages, plan),
        delivered,
      }),
      // The next turn's messages are stamped after these (usually no wait; see afterNewest).
      afterNewest(plan.stamps),
    ]);
    return { turn: ended, replyId: plan.replyId, written: plan.writes };
  });
}

/**
 * The run ended but its messages could not be confirmed in memory yet (the database is away): the
 * turn becomes `settling`, the row holding the reply and how the run ended, so a crash from here
 * on still ends it as the run did (recovery writes the reply from the row), never as an
 * interruption with an older checkpoint. The runner keeps its lease and tries again. No lock:
 * nothing about the thread's queue changes. Returns whether the row holds the snapshot now.
 */
export async function markSettling(
  db: Database,
  turn: TurnRow,
  runnerId: string,
  end: { reply: ReplyRecord; status: SettleOutcome; error: string | null; resumeToken: string | null },
): Promise<boolean> {
  return await db.transaction(async (tx) => {
    const current = await heldBy(tx, turn, runnerId);
    if (!current) return false;
    if (current.status === 'settling') return true;
    await transitionTurn(tx, current, 'settling', {
      outcome: end.status,
      error: end.error,
      resumeToken: end.resumeToken,
      assistantMessageId: end.reply.currentId,
      partialText: end.reply.currentText,
      partialParts: end.reply.snapshot(),
    });
    return true;
  });
}
