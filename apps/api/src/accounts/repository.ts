import type { Queryable } from '@chat/db';
import { schema } from '@chat/db';
import { eq, inArray, type SQL, sql } from 'drizzle-orm';

const { threads, branches, session, user, verification } = schema;

/**
 * Account-wide SQL. Which tables hold a user's rows is read from the database catalog, not
 * listed here, so a table added later is moved and deleted with the rest:
 * - app tables (`public`) reference `user` or `threads` by foreign key; deleting the user row
 *   cascades through them, and a guest's rows move by updating every column that references `user`;
 * - Mastra's tables (`mastra`) have no foreign keys: their `resourceId` is the user id and their
 *   `thread_id` a branch's memory thread id.
 */

/** better-auth's own rows of a user: the guest's sessions and credentials go with the guest. */
const AUTH_OWN_TABLES = ['session', 'account'];
const MASTRA_SCHEMA = 'mastra';
const RESOURCE_COLUMNS = ['resourceId', 'resource_id'];
const THREAD_COLUMNS = ['thread_id', 'threadId'];
/** Mastra's per-resource table is keyed by the resource id itself. */
const RESOURCES_TABLE = 'mastra_resources';

interface ColumnRef {
  table: string;
  column: string;
}

const listOf = (values: string[]) =>
  sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  );

const qualified = (ref: ColumnRef, schemaName = 'public') =>
  sql`${sql.identifier(schemaName)}.${sql.identifier(ref.table)}`;

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

/** Mastra's columns named like `names` (none when Mastra's schema is not there yet). */
async function mastraColumns(q: Queryable, names: string[]): Promise<ColumnRef[]> {
  const rows = await q.execute<{ table: string; column: string }>(sql`
    SELECT table_name AS "table", column_name AS "column"
    FROM information_schema.columns
    WHERE table_schema = ${MASTRA_SCHEMA} AND column_name IN (${listOf(names)})
    ORDER BY 1, 2`);
  return [...rows];
}

async function mastraHasTable(q: Queryable, table: string): Promise<boolean> {
  const rows = await q.execute(sql`
    SELECT 1 FROM information_schema.tables WHERE table_schema = ${MASTRA_SCHEMA} AND table_name = ${table}`);
  return rows.length > 0;
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

/**
 * Everything of the guest becomes the user's: app rows that reference the guest user, and
 * Mastra's rows under the guest's resource id. Running it again moves nothing more.
 */
export async function moveUserRows(q: Queryable, from: string, to: string): Promise<void> {
  for (const ref of await columnsReferencingUser(q)) {
    const column = sql.identifier(ref.column);
    await q.execute(sql`UPDATE ${qualified(ref)} SET ${column} = ${to} WHERE ${column} = ${from}`);
  }
  for (const ref of await mastraColumns(q, RESOURCE_COLUMNS)) {
    const column = sql.identifier(ref.column);
    await q.execute(
      sql`UPDATE ${qualified(ref, MASTRA_SCHEMA)} SET ${column} = ${to} WHERE ${column} = ${from}`,
    );
  }
  if (await mastraHasTable(q, RESOURCES_TABLE)) {
    const table = qualified({ table: RESOURCES_TABLE, column: 'id' }, MASTRA_SCHEMA);
    // The account's own resource row wins; the guest's is then dropped.
    await q.execute(sql`
      UPDATE ${table} SET id = ${to}
      WHERE id = ${from} AND NOT EXISTS (SELECT 1 FROM ${table} WHERE id = ${to})`);
    await q.execute(sql`DELETE FROM ${table} WHERE id = ${from}`);
  }
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
  for (const ref of await mastraColumns(q, RESOURCE_COLUMNS)) {
    await q.execute(
      sql`DELETE FROM ${qualified(ref, MASTRA_SCHEMA)} WHERE ${sql.identifier(ref.column)} = ${userId}`,
    );
  }
  if (memoryThreadIds.length > 0) {
    const ids = listOf(memoryThreadIds);
    for (const ref of await mastraColumns(q, THREAD_COLUMNS)) {
      await q.execute(
        sql`DELETE FROM ${qualified(ref, MASTRA_SCHEMA)} WHERE ${sql.identifier(ref.column)} IN (${ids})`,
      );
    }
    if (await mastraHasTable(q, 'mastra_threads')) {
      await q.execute(sql`DELETE FROM ${sql.identifier(MASTRA_SCHEMA)}.mastra_threads WHERE id IN (${ids})`);
    }
  }
  if (await mastraHasTable(q, RESOURCES_TABLE)) {
    await q.execute(
      sql`DELETE FROM ${sql.identifier(MASTRA_SCHEMA)}.${sql.identifier(RESOURCES_TABLE)} WHERE id = ${userId}`,
    );
  }
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
