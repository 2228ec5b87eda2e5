import type { Queryable, TurnRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, asc, eq, gte, inArray } from 'drizzle-orm';
import { insertTurn, transitionTurn } from '../lifecycle';

const turns = schema.chatTurnRequests;

/** Records a steer sent while a turn runs: it waits for that reply's next step boundary. */
export async function insertPendingSteer(
  q: Queryable,
  values: { threadId: string; branchId: string; clientRequestId: string; text: string },
): Promise<TurnRow> {
  return await insertTurn(q, 'steer_pending', { ...values, steer: true });
}

/** The thread's steers waiting for the running reply, in the order they were sent. */
export async function listPendingSteers(q: Queryable, threadId: string): Promise<TurnRow[]> {
  return await q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, threadId), eq(turns.status, 'steer_pending')))
    .orderBy(asc(turns.seq));
}

/**
 * The running reply took these steers in: each is `delivered`, its user message recorded (in the
 * running turn's branch). Steers no longer pending (requeued meanwhile) are left alone.
 */
export async function markSteersDelivered(
  q: Queryable,
  threadId: string,
  branchId: string,
  delivered: { turnId: string; messageId: string }[],
): Promise<TurnRow[]> {
  if (delivered.length === 0) return [];
  const pending = await q
    .select()
    .from(turns)
    .where(
      and(
        eq(turns.threadId, threadId),
        eq(turns.status, 'steer_pending'),
        inArray(
          turns.id,
          delivered.map((steer) => steer.turnId),
        ),
      ),
    );
  const rows: TurnRow[] = [];
  for (const row of pending) {
    const messageId = delivered.find((steer) => steer.turnId === row.id)?.messageId ?? null;
    const now = new Date();
    rows.push(
      await transitionTurn(q, row, 'delivered', {
        branchId,
        userMessageId: messageId,
        startedAt: now,
        finishedAt: now,
      }),
    );
  }
  return rows;
}

/**
 * Steers the running reply never took in become ordinary queued turns; they sort at the head (see
 * listQueuedTurns) in the order they were sent, and their runs get the steer reminder.
 * `turnIds`: only these; otherwise every pending steer of the thread.
 */
export async function requeueSteers(q: Queryable, threadId: string, turnIds?: string[]): Promise<TurnRow[]> {
  const rows: TurnRow[] = [];
  for (const row of await listPendingSteers(q, threadId)) {
    if (turnIds && !turnIds.includes(row.id)) continue;
    rows.push(await transitionTurn(q, row, 'queued'));
  }
  return rows;
}

/** The steers a turn took in: delivered on its branch since it started. */
export async function listSteersDeliveredInto(q: Queryable, turn: TurnRow): Promise<TurnRow[]> {
  if (!turn.startedAt) return [];
  return await q
    .select()
    .from(turns)
    .where(
      and(
        eq(turns.threadId, turn.threadId),
        eq(turns.branchId, turn.branchId),
        eq(turns.status, 'delivered'),
        gte(turns.startedAt, turn.startedAt),
      ),
    )
    .orderBy(asc(turns.seq));
}
