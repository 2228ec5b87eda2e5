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
 * 3. Then everything else by its stored place (`queue_position`, Q13): the order of acceptance
 *    until a person moves an item (`reorder.ts`). `seq` only breaks a tie, which no write makes.
 *
 * The items of 1 and 2 keep their place (`fixedPlaceOf` in the contracts, which the Dock reads
 * too): the moves and merges of Q13 and Q14 act only on the items of 3, among themselves.
 */
export function queueOrder(): SQL[] {
  return [desc(sql`${turns.status} = 'failed'`), desc(turns.steer), asc(turns.queuePosition), asc(turns.seq)];
}
