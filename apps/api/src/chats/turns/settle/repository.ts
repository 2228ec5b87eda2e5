import type { Queryable, TurnRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, lt, sql } from 'drizzle-orm';
import { statusIn } from '../lifecycle';

/** The queries of crash recovery: the turns whose runner stopped renewing their lease. */

const turns = schema.chatTurnRequests;

/**
 * The turn if a runner held it (running, or settling) and its lease expired, by the database's
 * clock (all instances share it).
 */
export async function findOrphanedTurn(q: Queryable, turnId: string): Promise<TurnRow | undefined> {
  const [row] = await q
    .select()
    .from(turns)
    .where(and(eq(turns.id, turnId), statusIn('leased'), lt(turns.leaseExpiresAt, sql`now()`)));
  return row;
}

/** Turns whose runner stopped renewing its lease (a crashed or hung process). */
export async function listOrphanedTurns(q: Queryable): Promise<TurnRow[]> {
  return await q
    .select()
    .from(turns)
    .where(and(statusIn('leased'), lt(turns.leaseExpiresAt, sql`now()`)));
}
