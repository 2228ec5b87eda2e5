import type { Queryable, TurnRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, asc, eq, gte, or, sql } from 'drizzle-orm';
import type { SteerMessage } from '../driver/types';
import { transitionTurn } from '../lifecycle';

/** The queries and moves of steers: pending while a reply runs, then delivered, or queued. */

const turns = schema.chatTurnRequests;

/** The thread's steers waiting for the running reply, in the order they were accepted. */
export async function listPendingSteers(q: Queryable, threadId: string): Promise<TurnRow[]> {
  return await selectPendingSteers(q, { threadId });
}

/** Read as every turn settles: built once (preparedQuery). */
const selectPendingSteers = preparedQuery('pending_steers', (q) =>
  q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, sql.placeholder('threadId')), eq(turns.status, 'steer_pending')))
    .orderBy(asc(turns.seq)),
);

/** The running reply took the steer in: it is `delivered`, its user message recorded on `branchId`. */
export async function markSteerDelivered(
  q: Queryable,
  steer: TurnRow,
  branchId: string,
  messageId: string,
): Promise<TurnRow> {
  const now = new Date();
  return await transitionTurn(q, steer, 'delivered', {
    branchId,
    userMessageId: messageId,
    startedAt: now,
    finishedAt: now,
  });
}

/**
 * Steers no run took in become ordinary queued turns at the head of the queue (queue/order.ts puts
 * them there), in the order they were sent; their runs get the steer reminder. Every pending steer
 * of the thread: none is ever left pending without a reply running to take it in.
 */
export async function requeueSteers(q: Queryable, threadId: string): Promise<TurnRow[]> {
  const rows: TurnRow[] = [];
  for (const row of await listPendingSteers(q, threadId)) rows.push(await transitionTurn(q, row, 'queued'));
  return rows;
}

/** The steers a turn took in: delivered on its branch since it started. */
export async function listSteersDeliveredInto(q: Queryable, turn: TurnRow): Promise<TurnRow[]> {
  if (!turn.startedAt) return [];
  return await selectSteersDeliveredInto(q, intoTurn({ ...turn, startedAt: turn.startedAt }));
}

/**
 * A steer the running turn took in: delivered on its branch since it started (placeholders
 * `branchId`, `startedAt`; the values of `intoTurn`).
 */
function deliveredIntoTurn() {
  return and(
    eq(turns.status, 'delivered'),
    eq(turns.branchId, sql.placeholder('branchId')),
    gte(turns.startedAt, sql.placeholder('startedAt')),
  );
}

/** The placeholder values of `deliveredIntoTurn` for a turn that started. */
function intoTurn(turn: TurnRow & { startedAt: Date }) {
  // A prepared statement's parameter goes as the server typed it: a timestamp as text.
  return { threadId: turn.threadId, branchId: turn.branchId, startedAt: turn.startedAt.toISOString() };
}

/** Read as every turn is stored and settles: built once (preparedQuery). */
const selectSteersDeliveredInto = preparedQuery('steers_delivered_into', (q) =>
  q
    .select()
    .from(turns)
    .where(and(eq(turns.threadId, sql.placeholder('threadId')), deliveredIntoTurn()))
    .orderBy(asc(turns.seq)),
);

/**
 * What a running turn's step boundary reads first, in one statement: the thread's steers waiting
 * for it, and the steers the database says the turn took in, in the order they were accepted.
 */
export async function listSteersAtBoundary(q: Queryable, turn: TurnRow): Promise<TurnRow[]> {
  if (!turn.startedAt) return await listPendingSteers(q, turn.threadId);
  return await selectSteersAtBoundary(q, intoTurn({ ...turn, startedAt: turn.startedAt }));
}

/** Read at every step boundary of a run that can steer: built once (preparedQuery). */
const selectSteersAtBoundary = preparedQuery('steers_at_boundary', (q) =>
  q
    .select()
    .from(turns)
    .where(
      and(
        eq(turns.threadId, sql.placeholder('threadId')),
        or(eq(turns.status, 'steer_pending'), deliveredIntoTurn()),
      ),
    )
    .orderBy(asc(turns.seq)),
);

/**
 * The steers a turn took in, as the database has them (each with its message id and when it was
 * taken in): what a reply must hold whatever its runner heard. A boundary's commit whose answer
 * was lost in an outage leaves a steer delivered that the run never got.
 */
export async function deliveredSteersOf(
  q: Queryable,
  turn: TurnRow,
): Promise<Array<SteerMessage & { at: Date | null }>> {
  return (await listSteersDeliveredInto(q, turn)).flatMap((steer) => {
    const message = steerMessageOf(steer);
    return message ? [{ ...message, at: steer.startedAt }] : [];
  });
}

/** A delivered steer as a driver takes it in (none before its message has an id). */
export function steerMessageOf(steer: TurnRow): SteerMessage | undefined {
  return steer.userMessageId
    ? { turnId: steer.id, messageId: steer.userMessageId, text: steer.text }
    : undefined;
}
