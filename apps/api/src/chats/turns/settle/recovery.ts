import { backoffDelay, turnErrorMessages } from '@chat/contracts';
import type { Database, Queryable, TurnRow } from '@chat/db';
import { sql } from 'drizzle-orm';
import { TOOL_CANCELLED_REASON } from '../../../agent/tools';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import { findBranch } from '../../branches/repository';
import { ensureTurnStored } from '../../branches/transcript';
import type { TranscriptStore } from '../../transcript/transcriptStore';
import { ReplyRecord } from '../replyRecord';
import { deliveredSteersOf } from '../steer/repository';
import { findOrphanedTurn, listOrphanedTurns } from './repository';
import { failUnsettledTurn, type Settlement, settleTurn } from './settle';
import { SettleRetry } from './settleRetry';

export interface RecoveryDeps {
  db: Database;
  transcript: TranscriptStore;
  signals: Signals;
  logger: Logger;
  /** Whether this instance's own runner still holds the turn (it is never recovered from here). */
  holds?: (turnId: string) => boolean;
}

/**
 * Settles a turn whose runner died (its lease ran out, running or settling its reply). Its reply
 * is rebuilt from the row (the messages as of the last step end, the text checkpointed since, the
 * steers it took in) and written to memory where missing; a running turn becomes `interrupted`,
 * a settling one ends as its run did (the outcome it recorded). The thread's active slot is
 * released. Queued turns are not touched. Safe to call from any instance, any number of times:
 * only the first settler (under the thread lock) writes the reply. A turn this instance's runner
 * still holds is left to it (its lease lapsed while the database was away; it renews it now).
 */
export async function settleOrphanedTurn(deps: RecoveryDeps, orphan: TurnRow): Promise<TurnRow | null> {
  if (deps.holds?.(orphan.id)) return null;
  const settled = await settleTurn(
    deps,
    orphan.threadId,
    (tx) => findOrphanedTurn(tx, orphan.id),
    async (tx, turn, thread) => {
      const branch = await findBranch(tx, turn.branchId);
      const reply = await recordedReply(tx, turn);
      const settling = turn.status === 'settling' && turn.outcome !== null;
      // A tool call cut off before its result would leave the next model call an unfinished exchange.
      if (!settling || turn.outcome !== 'completed') reply.closeOpenToolCalls(TOOL_CANCELLED_REASON);
      let replyId = turn.assistantMessageId;
      if (branch && turn.userMessageId) {
        replyId = await ensureTurnStored(deps.transcript, deps.db, {
          memoryThreadId: branch.memoryThreadId,
          resourceId: thread.ownerId,
          userMessage: {
            id: turn.userMessageId,
            text: turn.text,
            createdAt: turn.startedAt ?? turn.createdAt,
            attachments: turn.attachments,
          },
          messages: reply.all,
        });
      }
      const settlement: Settlement =
        settling && turn.outcome
          ? { status: turn.outcome, error: turn.error, assistantMessageId: replyId }
          : { status: 'interrupted', error: turnErrorMessages.serverStopped, assistantMessageId: replyId };
      return settlement;
    },
  );
  if (settled)
    deps.logger.warn(
      { turnId: settled.id, threadId: settled.threadId, status: settled.status },
      'settled an orphaned turn',
    );
  return settled;
}

/**
 * An orphan's reply from its row: the checkpoint, and the steers it took in after the
 * checkpoint's last step end (delivered, their text on their own rows: they follow everything the
 * checkpoint holds).
 */
async function recordedReply(tx: Queryable, turn: TurnRow): Promise<ReplyRecord> {
  const reply = ReplyRecord.restore(turn.partialParts, {
    id: turn.assistantMessageId,
    text: turn.partialText,
  });
  reply.appendSteers(await deliveredSteersOf(tx, turn));
  return reply;
}

/**
 * Settles every orphaned turn. `retries` (kept by the sweeper from one sweep to the next) bounds a
 * turn whose settle keeps failing for a reason other than an outage (F1): past `giveUpMs` it ends
 * failed (`failUnsettledTurn`, its reply as its row holds it), so no sweep meets it again. Each
 * such turn's error is logged at its first failure and when it is given up, not at every sweep.
 */
export async function settleOrphanedTurns(
  deps: RecoveryDeps,
  retries: { byTurn: Map<string, SettleRetry>; giveUpMs: number },
): Promise<number> {
  let count = 0;
  const orphans = await listOrphanedTurns(deps.db);
  // A turn no longer orphaned (settled, or its runner is back) starts afresh should it return.
  const ids = new Set(orphans.map((orphan) => orphan.id));
  for (const turnId of retries.byTurn.keys()) if (!ids.has(turnId)) retries.byTurn.delete(turnId);
  for (const orphan of orphans) {
    try {
      if (await settleOrphanedTurn(deps, orphan)) count += 1;
      retries.byTurn.delete(orphan.id);
    } catch (error) {
      const retry =
        retries.byTurn.get(orphan.id) ??
        new SettleRetry(retries.giveUpMs, {
          logger: deps.logger,
          turn: orphan,
          notYet: 'could not settle an orphaned turn yet',
        });
      retries.byTurn.set(orphan.id, retry);
      if (!retry.failed(error)) continue;
      const failed = await failUnsettledTurn(deps, orphan.threadId, (tx) => findOrphanedTurn(tx, orphan.id));
      retries.byTurn.delete(orphan.id);
      if (failed) count += 1;
    }
  }
  return count;
}

/** The longest pause between sweeps while they keep failing (the database is down). */
const MAX_BACKOFF_MS = 15_000;

/**
 * Sweeps for orphaned turns now and then every `intervalMs`; returns a stop function. A sweep that
 * fails (the database is down) is logged and the next one waits longer, doubling up to 15 s, and
 * back to `intervalMs` after one succeeds. A turn whose settle keeps failing otherwise ends failed
 * after `giveUpMs` (F1). After an outage, nothing is settled for `graceMs` (a
 * lease): every live runner's lease lapsed while the database was away, and each renews it within
 * a third of a lease once it is back; only a runner that is really gone is still lapsed after
 * that. It never throws: a background task must not stop the process.
 */
export function startOrphanSweeper(
  deps: RecoveryDeps,
  options: { intervalMs: number; graceMs: number; giveUpMs: number },
): () => void {
  const { intervalMs, graceMs, giveUpMs } = options;
  const retries = { byTurn: new Map<string, SettleRetry>(), giveUpMs };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;
  let graceUntil = 0;
  const sweep = async () => {
    try {
      if (failures > 0) {
        // The first sweep since the outage: reach the database before the grace begins.
        await deps.db.execute(sql`select 1`);
        graceUntil = Date.now() + graceMs;
        deps.logger.info({ failures }, 'orphan sweeps work again');
        failures = 0;
      } else if (Date.now() >= graceUntil) await settleOrphanedTurns(deps, retries);
    } catch (error) {
      failures += 1;
      if (failures === 1) deps.logger.warn({ err: error }, 'orphan sweep failed; backing off');
    }
    if (stopped) return;
    const delay =
      failures === 0
        ? intervalMs
        : backoffDelay(failures, 2 * intervalMs, Math.max(intervalMs, MAX_BACKOFF_MS));
    timer = setTimeout(() => void sweep(), delay);
    timer.unref();
  };
  void sweep();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
