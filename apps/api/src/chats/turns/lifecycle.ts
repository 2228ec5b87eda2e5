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
type TurnChanges = { [K in keyof TurnColumns]?: TurnColumns[K] | SQL };

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

/** Where a turn's life begins: waiting in the queue, or (a steer) waiting for the running reply. */
export type EntryStatus = Extract<TurnStatus, 'queued' | 'steer_pending'>;

/** Records an accepted turn (Q1: recording it is acceptance). */
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
  },
): Promise<TurnRow> {
  const [row] = await q
    .insert(turns)
    .values({ ...values, status })
    .returning();
  if (!row) throw new InvariantError('insert returned no turn');
  return row;
}
