import type { Queryable, ThreadRow } from '@chat/db';
import { preparedQuery, schema } from '@chat/db';
import { and, eq, or, type SQL, sql } from 'drizzle-orm';
import { textArrayLiteral } from '../../../platform/sqlArrays';
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
  const skip = textArrayLiteral(options.skip);
  const [row] = options.threadId
    ? await selectDrainableThreadOf(q, { threadId: options.threadId, skip })
    : await selectDrainableThread(q, { skip });
  return row;
}

/**
 * Whether a chat a signal named may be drainable now, read without a lock or a transaction: most
 * settles name a chat whose queue is empty or that a viewer drains, and for those this one
 * statement replaces a transaction of three (begin, the locking pick, commit). It only narrows
 * where to look further: a chat it finds is picked again under its lock (`lockDrainableThread`),
 * and one that becomes drainable just after this read is named again by that change's own signal
 * (`queue.changed`, `thread.changed`, `turn.settled`), or found by the next sweep.
 */
export async function mayDrainThread(q: Queryable, threadId: string): Promise<boolean> {
  const rows = await selectDrainableThreadIdOf(q, { threadId, skip: textArrayLiteral([]) });
  return rows.length > 0;
}

const drainableWhere = (ofThread: boolean) =>
  and(
    eq(threads.drainMode, 'background'),
    eq(threads.queuePaused, false),
    sql`${threads.id} in (select ${turns.threadId} from ${turns} where ${turns.status} = 'queued')`,
    sql`not exists (select 1 from ${turns} where ${turns.threadId} = ${threads.id} and ${blocking()})`,
    ofThread ? eq(threads.id, sql.placeholder('threadId')) : undefined,
    sql`${threads.id}::text <> all(${sql.placeholder('skip')}::text[])`,
  );

// Read after every settle (a signal names the chat) and by every sweep: built once (preparedQuery),
// for one chat or any. An empty `skip` skips nothing.
const drainable = (q: Queryable, ofThread: boolean) =>
  q.select().from(threads).where(drainableWhere(ofThread)).limit(1).for('update', { skipLocked: true });
const selectDrainableThreadOf = preparedQuery('drainable_thread_of', (q) => drainable(q, true));
const selectDrainableThread = preparedQuery('drainable_thread', (q) => drainable(q, false));
const selectDrainableThreadIdOf = preparedQuery('drainable_thread_id_of', (q) =>
  q.select({ id: threads.id }).from(threads).where(drainableWhere(true)).limit(1),
);

/** A turn that keeps the head from running: one holding the thread's slot, or a failed head (Q11). */
function blocking(): SQL {
  return or(statusIn('active'), eq(turns.status, 'failed')) as SQL;
}
