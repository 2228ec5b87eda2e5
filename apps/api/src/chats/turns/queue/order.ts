import { schema } from '@chat/db';
import { asc, desc, type SQL, sql } from 'drizzle-orm';

const turns = schema.chatTurnRequests;

/**
 * The one rule of the queue's order, as the ORDER BY of every read of the waiting items: the
 * thread detail and its events show it, every claim takes its first item, and a steer that is
 * requeued lands where it puts it.
 *
 * 1. A failed turn stays first and blocks until it is retried, edited or deleted (Q11).
 * 2. Then the steers not yet delivered, pending or requeued (the reply they were sent into ended
 *    first), in the order they were accepted: they were meant to come before anything else.
 * 3. Then everything else in the order it was accepted (`seq`).
 *
 * A stored manual order (Q13) would sort within 3, below the same two rules.
 */
export function queueOrder(): SQL[] {
  return [desc(sql`${turns.status} = 'failed'`), desc(turns.steer), asc(turns.seq)];
}
