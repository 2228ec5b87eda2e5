import type { Queryable } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { transcriptTables } from '../chats/transcript/tables';

const { threads, branches, chatTurnRequests, session, user, verification } = schema;

/**
 * Account-wide SQL. Which tables hold a user's rows is read from the database catalog, not
 * listed here, so a table added later is moved and deleted with the rest:
 * - app tables (`public`) reference `user` or `threads` by foreign key; deleting the user row
 *   cascades through them, and a guest's rows move by updating every column that references `user`;
 * - the transcript store's rows are moved and deleted by the store (chats/transcript/), whose
 *   implementation holds all SQL against its tables.
 */

/** better-auth's own rows of a user: the guest's sessions and credentials go with the guest. */
const AUTH_OWN_TABLES = ['session', 'account'];

interface ColumnRef {
  table: string;
  column: string;
}

const qualified = (ref: ColumnRef) => sql`${sql.identifier('public')}.${sql.identifier(ref.table)}`;

/** Columns of `public` tables (other than better-auth's own) with a foreign key to `user`. */
async function columnsReferencingUser(q: Queryable): Promise<ColumnRef[]> {
  const rows = await q.execute<{ table: string; column: string }>(sql`
    SELECT cls.relname AS "table", att.attname AS "column"
    FROM pg_constraint con
    JOIN pg_class cls ON cls.oid = con.conrelid
    JOIN pg_namespace ns ON ns.oid = cls.relnamespace
    JOIN pg_attribute att ON att.attrelid = con.conrelid AND att.attnum = ANY (con.conkey)
    WHERE con.contype = 'f' AND con.confrelid = 'public."user"'::regclass AND ns.nspname = 'public'
    ORDER BY 1, 2`);
  return [...rows].filter((ref) => !AUTH_OWN_TABLES.includes(ref.table));
}

/** The user's thread ids; with `lock`, locked for the rest of the transaction. */
export async function threadIdsOfUser(
  q: Queryable,
  userId: string,
  options: { lock?: boolean } = {},
): Promise<string[]> {
  const query = q.select({ id: threads.id }).from(threads).where(eq(threads.ownerId, userId));
  const rows = options.lock ? await query.for('update') : await query;
  return rows.map((row) => row.id);
}

/** The memory thread ids of every branch of these threads. */
export async function memoryThreadIdsOf(q: Queryable, threadIds: string[]): Promise<string[]> {
  if (threadIds.length === 0) return [];
  const rows = await q
    .select({ id: branches.memoryThreadId })
    .from(branches)
    .where(inArray(branches.threadId, threadIds));
  return rows.map((row) => row.id);
}

/** The turns of these threads whose model call runs now (under the owner's memory resource at its start). */
export async function runningTurnIdsOf(q: Queryable, threadIds: string[]): Promise<string[]> {
  if (threadIds.length === 0) return [];
  const rows = await q
    .select({ id: chatTurnRequests.id })
    .from(chatTurnRequests)
    .where(and(inArray(chatTurnRequests.threadId, threadIds), eq(chatTurnRequests.status, 'running')));
  return rows.map((row) => row.id);
}

/** Which of these turns still run. */
export async function stillRunning(q: Queryable, turnIds: string[]): Promise<string[]> {
  if (turnIds.length === 0) return [];
  const rows = await q
    .select({ id: chatTurnRequests.id })
    .from(chatTurnRequests)
    .where(and(inArray(chatTurnRequests.id, turnIds), eq(chatTurnRequests.status, 'running')));
  return rows.map((row) => row.id);
}

/**
 * Everything of the guest becomes the user's: app rows that reference the guest user, and
 * Mastra's rows under the guest's resource id. Running it again moves nothing more.
 */
export async function moveUserRows(q: Queryable, from: string, to: string): Promise<void> {
  // One settings row per person (M2, M4): an account that has its own keeps it, and the guest's
  // goes (moving it would break the key and with it the whole link).
  await q.execute(
    sql`DELETE FROM account_settings WHERE owner_id = ${from} AND EXISTS (SELECT 1 FROM account_settings WHERE owner_id = ${to})`,
  );
  for (const ref of await columnsReferencingUser(q)) {
    const column = sql.identifier(ref.column);
    await q.execute(sql`UPDATE ${qualified(ref)} SET ${column} = ${to} WHERE ${column} = ${from}`);
  }
  await transcriptTables.moveRowsOfUser(q, from, to);
}

/**
 * Deletes the user and every row of theirs. Mastra's rows go by resource id and memory thread id;
 * the app's go by deleting the user row, which cascades (sessions, accounts, threads and all that
 * hangs off threads). A table that references `user` without a cascade makes this fail loudly.
 */
export async function deleteUserRows(
  q: Queryable,
  target: { userId: string; email: string | null; memoryThreadIds: string[] },
): Promise<void> {
  const { userId, memoryThreadIds } = target;
  await transcriptTables.deleteRowsOfUser(q, userId, memoryThreadIds);
  // Verification rows (email or reset tokens) name the user by email or id.
  const identifiers: SQL[] = [eq(verification.identifier, userId), eq(verification.value, userId)];
  if (target.email) identifiers.push(eq(verification.identifier, target.email));
  for (const condition of identifiers) await q.delete(verification).where(condition);
  // threads.active_branch_id points at branches of the same threads: both go in this one statement.
  await q.delete(user).where(eq(user.id, userId));
}

export async function findUser(q: Queryable, userId: string) {
  const [row] = await q.select().from(user).where(eq(user.id, userId));
  return row;
}

/** Locks the user row: one deletion at a time, and no link into an account being deleted. */
export async function lockUser(q: Queryable, userId: string) {
  const [row] = await q.select().from(user).where(eq(user.id, userId)).for('update');
  return row;
}

/**
 * Guest users whose last visit (the later of the user row's update and their sessions' refresh,
 * which better-auth moves on at most every few minutes while a session is used) is before
 * `before`, oldest first, at most `limit`.
 */
export async function idleGuestIds(q: Queryable, before: Date, limit: number): Promise<string[]> {
  const rows = await q.execute<{ id: string }>(sql`
    SELECT u.id FROM ${user} u
    LEFT JOIN LATERAL (SELECT max(s.updated_at) AS seen FROM ${session} s WHERE s.user_id = u.id) s ON true
    WHERE u.is_anonymous AND greatest(u.updated_at, s.seen) < ${before.toISOString()}::timestamptz
    ORDER BY greatest(u.updated_at, s.seen)
    LIMIT ${limit}`);
  return [...rows].map((row) => row.id);
}
