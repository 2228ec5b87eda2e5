import type { Queryable, ThreadRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, or, type SQL, sql } from 'drizzle-orm';
import { textArray } from '../../../platform/sqlArrays';
import { statusIn } from '../lifecycle';

const { threads, chatTurnRequests: turns } = schema;

/**
 * Q15: finds and locks a chat the server may drain now: its queue runs in the background, is not
 * paused, holds a queued turn, and has no active turn and no failed head. Threads another
 * transaction holds are skipped (`SKIP LOCKED`), so instances looking at once each find a different
 * chat, or none, and never wait on each other. This only narrows where to look: the claim that
 * follows in the same transaction decides by the rules of every claim (`HeadClaims`).
 *
 * `threadId`: only that chat (a signal named it); `skip`: chats whose claim was just refused.
 * Driven by the few queued turns there are (a partial index), never by all chats.
 */
export async function lockDrainableThread(
  q: Queryable,
  options: { threadId?: string; skip: readonly string[] },
): Promise<ThreadRow | undefined> {
  const conditions: SQL[] = [
    eq(threads.drainMode, 'background'),
    eq(threads.queuePaused, false),
    sql`${threads.id} in (select ${turns.threadId} from ${turns} where ${turns.status} = 'queued')`,
    sql`not exists (select 1 from ${turns} where ${turns.threadId} = ${threads.id} and ${blocking()})`,
  ];
  if (options.threadId) conditions.push(eq(threads.id, options.threadId));
  if (options.skip.length > 0) conditions.push(sql`${threads.id}::text <> all(${textArray(options.skip)})`);
  const [row] = await q
    .select()
    .from(threads)
    .where(and(...conditions))
    .limit(1)
    .for('update', { skipLocked: true });
  return row;
}

/** A turn that keeps the head from running: one holding the thread's slot, or a failed head (Q11). */
function blocking(): SQL {
  return or(statusIn('active'), eq(turns.status, 'failed')) as SQL;
}
