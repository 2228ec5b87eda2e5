import { canTransition, type TurnStatus, type TurnStatusGroup, turnStatusGroups } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';

/**
 * A turn row's lifecycle, enforced: the moves are the contract's table (`turnTransitions` in
 * @chat/contracts, beside the status groups), and `transitionTurn` is the one write that changes a
 * turn's status. Anything not in the table is a bug and throws.
 */

const turns = schema.chatTurnRequests;

export { canTransition };

export function assertTransition(from: TurnStatus, to: TurnStatus): void {
  if (!canTransition(from, to)) throw new InvariantError(`illegal turn transition ${from} -> ${to}`);
}

/** The SQL condition "the turn's status is in `group`" (see `turnStatusGroups`). */
export function statusIn(group: TurnStatusGroup): SQL {
  return inArray(turns.status, [...turnStatusGroups[group]]);
}

type TurnColumns = Omit<typeof turns.$inferInsert, 'id' | 'threadId' | 'status'>;
export type TurnChanges = { [K in keyof TurnColumns]?: TurnColumns[K] | SQL };

/**
 * Moves a turn along the table. The update is conditional on the status the caller saw, so a
 * concurrent move makes this one fail loudly instead of overwriting it.
 */
export async function transitionTurn(
  q: Queryable,
  turn: Pick<TurnRow, 'id' | 'status'>,
  to: TurnStatus,
  changes: TurnChanges = {},
): Promise<TurnRow> {
  assertTransition(turn.status, to);
  const [row] = await q
    .update(turns)
    .set({ ...changes, status: to })
    .where(and(eq(turns.id, turn.id), eq(turns.status, turn.status)))
    .returning();
  if (!row) throw new InvariantError(`turn ${turn.id} is no longer ${turn.status}`);
  return row;
}

/**
 * Where a turn's life begins: waiting in the queue, (a steer) waiting for the running reply, or,
 * a send to an idle thread, running at once: claimed in the transaction that accepts it
 * (`running/claim.ts`), its `queued -> running` move made in the same write that records it.
 */
export type EntryStatus = Extract<TurnStatus, 'queued' | 'steer_pending' | 'running'>;

/**
 * Records an accepted turn (Q1: recording it is acceptance). A turn recorded `running` takes the
 * table's `queued -> running` move in that write, with its claim's columns (`changes`).
 */
export async function insertTurn(
  q: Queryable,
  status: EntryStatus,
  values: {
    threadId: string;
    branchId: string;
    clientRequestId: string;
    text: string;
    steer?: boolean;
    attachments?: TurnRow['attachments'];
    /** Its place in the queue; left out, it goes last (a merge gives it the first item's, Q14). */
    queuePosition?: number;
    /** A regenerate's own model (M3); left out, the chat's when claimed. */
    requestedModel?: string;
  },
  changes: TurnChanges = {},
): Promise<TurnRow> {
  if (status === 'running') assertTransition('queued', 'running');
  const [row] = await q
    .insert(turns)
    .values({ ...values, ...changes, status })
    .returning();
  if (!row) throw new InvariantError('insert returned no turn');
  return row;
}

/**
 * Records turns that ran in another chat and are copied with its history (an import, a fork, a
 * continued share): they begin where they ended there, settled, and never move again. Their
 * messages are already stored; the rows carry what the API knows of them (which message is whose,
 * a stop, the model, the images) and let the next turn on a branch see how the last one ended (S5).
 */
export async function insertCopiedTurns(
  q: Queryable,
  values: ReadonlyArray<{
    id: string;
    threadId: string;
    branchId: string;
    clientRequestId: string;
    text: string;
    status: Extract<TurnStatus, 'completed' | 'interrupted'>;
    userMessageId: string | null;
    assistantMessageId: string | null;
    model: string | null;
    /** The reply's token usage (C1), when the copied chat says. */
    usage?: TurnRow['usage'];
    attachments: TurnRow['attachments'];
  }>,
): Promise<TurnRow[]> {
  const finishedAt = new Date();
  const rows: TurnRow[] = [];
  // In batches: one statement's parameters are bounded (65,535), a long chat's turns are not.
  for (let start = 0; start < values.length; start += 1_000) {
    const batch = values.slice(start, start + 1_000);
    rows.push(
      ...(await q
        .insert(turns)
        .values(batch.map((value) => ({ ...value, startedAt: finishedAt, finishedAt })))
        .returning()),
    );
  }
  return rows;
}
