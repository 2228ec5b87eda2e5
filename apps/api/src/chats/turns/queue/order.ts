import { schema } from '@chat/db';
import { asc, desc, type SQL, sql } from 'drizzle-orm';

const turns = schema.chatTurnRequests;

/**
 * The one rule of the queue's order, as the ORDER BY of every read of the waiting items: the
 * thread detail and its events show it, every claim takes its first item, and a steer that is
 * requeued lands where it puts it.
 *
 * Pending steers first (they join the running reply), then steers the running reply missed
 * (requeued at the head, in the order they were sent), then the rest in the order they were
 * accepted (`seq`).
 */
export function queueOrder(): SQL[] {
  return [desc(sql`${turns.status} = 'steer_pending'`), desc(turns.steer), asc(turns.seq)];
}
