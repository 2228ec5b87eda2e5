import {
  canTransition,
  type TokenUsage,
  type TurnStatus,
  type TurnStatusGroup,
  turnStatusGroups,
} from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';
import { leaseFromNowPlaceholder, leaseInterval } from './lease';

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

/** How a settling turn ends: what every settle writes (the rest of the row is cleared). */
export interface TurnEnd {
  error: string | null;
  assistantMessageId: string | null;
  /** Left out: the row keeps the one it has. */
  resumeToken?: string | null;
  /** Left out: the row keeps the one it has. */
  usage?: TokenUsage | null;
  finishedAt: Date;
}

/**
 * `transitionTurn` for the move that ends a turn (running, settling or awaiting an approval, to
 * how it ended): its reply is in memory, so the checkpoint and the lease go. One write of fixed
 * shape for every settle, a column left out kept as it is.
 */
export async function endTurn(
  q: Queryable,
  turn: Pick<TurnRow, 'id' | 'status'>,
  to: TurnStatus,
  end: TurnEnd,
): Promise<TurnRow> {
  assertTransition(turn.status, to);
  const [row] = await updateEndedTurn(q, {
    turnId: turn.id,
    from: turn.status,
    to,
    error: end.error,
    assistantMessageId: end.assistantMessageId,
    setResumeToken: end.resumeToken !== undefined,
    resumeToken: end.resumeToken ?? null,
    setUsage: end.usage !== undefined,
    // As drizzle writes a jsonb column: its JSON text, or NULL.
    usage: end.usage == null ? null : JSON.stringify(end.usage),
    // A prepared statement's parameter goes as the server typed it: a timestamp as text.
    finishedAt: end.finishedAt.toISOString(),
  });
  if (!row) throw new InvariantError(`turn ${turn.id} is no longer ${turn.status}`);
  return row;
}

/** Written as every turn settles: built once (preparedQuery). */
const updateEndedTurn = preparedQuery('turn_end', (q) =>
  q
    .update(turns)
    .set({
      status: sql`${sql.placeholder('to')}`,
      error: sql`${sql.placeholder('error')}`,
      assistantMessageId: sql`${sql.placeholder('assistantMessageId')}`,
      resumeToken: sql`case when ${sql.placeholder('setResumeToken')}::boolean then ${sql.placeholder('resumeToken')}::text else ${turns.resumeToken} end`,
      usage: sql`case when ${sql.placeholder('setUsage')}::boolean then ${sql.placeholder('usage')}::jsonb else ${turns.usage} end`,
      partialText: '',
      partialParts: null,
      outcome: null,
      finishedAt: sql`${sql.placeholder('finishedAt')}::timestamptz`,
      leaseExpiresAt: null,
    })
    .where(and(eq(turns.id, sql.placeholder('turnId')), eq(turns.status, sql.placeholder('from'))))
    .returning(),
);

/**
 * Where a turn's life begins: waiting in the queue, (a steer) waiting for the running reply, or,
 * a send to an idle thread, running at once: claimed in the transaction that accepts it
 * (`claim/claim.ts`), its `queued -> running` move made in the same write that records it.
 */
export type EntryStatus = Extract<TurnStatus, 'queued' | 'steer_pending' | 'running'>;

/** What a claim writes on a turn recorded running at once (`claim/claim.ts` decides it). */
export interface NewClaim {
  handoff: boolean;
  runnerId: string;
  /** Its lease runs from the database's clock (lease.ts). */
  leaseMs: number;
  startedAt: Date;
  userMessageId: string;
  model: string;
}

/** The values an accepted turn is recorded with. */
export interface NewTurn {
  /**
   * Its id when the caller names it (a turn recorded running announces itself in the same round
   * trip, ADR-060); else a new one.
   */
  id?: string;
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
}

/**
 * Records an accepted turn (Q1: recording it is acceptance). A turn recorded `running` takes the
 * table's `queued -> running` move in that write, with its claim's columns (`claim`); the columns
 * a claim of a waiting turn resets (`finished_at`, the reply, the error) are at their defaults on
 * a new row, and its `queue_position` is the sequence's next either way.
 */
export async function insertTurn(
  q: Queryable,
  status: EntryStatus,
  values: NewTurn,
  claim?: NewClaim,
): Promise<TurnRow> {
  if (status === 'running') assertTransition('queued', 'running');
  if (status === 'running' && !claim) throw new InvariantError('a turn recorded running needs its claim');
  const common = {
    threadId: values.threadId,
    branchId: values.branchId,
    clientRequestId: values.clientRequestId,
    text: values.text,
    steer: values.steer ?? false,
    attachments: values.attachments ?? [],
    requestedModel: values.requestedModel ?? null,
    status,
  };
  const [row] = claim
    ? await insertClaimedTurn(q, {
        ...common,
        ...claim,
        id: values.id ?? crypto.randomUUID(),
        lease: leaseInterval(claim.leaseMs),
      })
    : values.queuePosition === undefined
      ? await insertWaitingTurn(q, common)
      : await q
          .insert(turns)
          .values({ ...values, status })
          .returning();
  if (!row) throw new InvariantError('insert returned no turn');
  return row;
}

// Every send records its turn one of these two ways: built once (preparedQuery). A merge's turn,
// which takes a given place in the queue, is built as it comes.
const newTurnColumns = {
  threadId: sql.placeholder('threadId'),
  branchId: sql.placeholder('branchId'),
  clientRequestId: sql.placeholder('clientRequestId'),
  text: sql.placeholder('text'),
  steer: sql.placeholder('steer'),
  attachments: sql.placeholder('attachments'),
  requestedModel: sql.placeholder('requestedModel'),
  status: sql.placeholder('status'),
};
const insertWaitingTurn = preparedQuery('turn_insert_waiting', (q) =>
  q.insert(turns).values(newTurnColumns).returning(),
);
const insertClaimedTurn = preparedQuery('turn_insert_claimed', (q) =>
  q
    .insert(turns)
    .values({
      ...newTurnColumns,
      id: sql.placeholder('id'),
      handoff: sql.placeholder('handoff'),
      runnerId: sql.placeholder('runnerId'),
      leaseExpiresAt: leaseFromNowPlaceholder,
      startedAt: sql.placeholder('startedAt'),
      userMessageId: sql.placeholder('userMessageId'),
      model: sql.placeholder('model'),
    })
    .returning(),
);

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
