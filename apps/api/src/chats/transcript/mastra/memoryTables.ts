import { preparedSql, type Queryable } from '@chat/db';
import { type SQL, sql } from 'drizzle-orm';
import { textArray, textArrayLiteral } from '../../../platform/sqlArrays';
import type {
  MarkedMessage,
  ModelWindowScope,
  ModelWindowTally,
  NewStoredMessage,
  StoredContent,
  StoredMessage,
  WindowMessage,
} from '../transcriptStore';

/**
 * Every SQL statement against Mastra's own tables (schema `mastra`, see mastraMemory.ts): their
 * layout is Mastra's, not ours, so an upgrade of @mastra/pg that changes it is checked against this
 * one file. Everything else reaches memory through Mastra's API (mastraTranscript.ts). The host
 * calls these through the transcript store's tables (TranscriptTables), never by name.
 *
 * - A branch's messages, read in the order Mastra's own recall gives them (`createdAt`, then id),
 *   in one query each. Reading through `memory.recall` pushes every message through Mastra's
 *   MessageList, whose cost grows with the square of the transcript; these readers stay linear.
 * - The lineage rows (`message_lineage`, see chats/branches/lineage.ts), whose parents are the
 *   branch's stored order.
 * - An account's rows, moved to another account or deleted with it.
 * - A new chat's memory threads and messages (an import, a fork, a continued share), a new
 *   version's copy of the history before its edited message, and messages a change deletes (a
 *   failed attempt, the latest turn), written in the caller's transaction so they change whole or
 *   not at all (Mastra's own `saveMessages`, `copyThread` and `deleteMessages` write through
 *   Mastra's connections, outside it: a change rolled back by an outage or a kill kept theirs).
 * - A turn's messages, made durable by the runner: the rows Mastra's `saveMessages` writes, in one
 *   statement instead of its six (ADR-046).
 */

/** The rows as Mastra stores them (`content` is the JSON of MastraMessageContentV2). */
interface MessageRow extends Record<string, unknown> {
  id: string;
  content: string;
  role: string;
  type: string | null;
  created_at: string;
  resourceId: string | null;
}

const MASTRA_SCHEMA = 'mastra';
const MESSAGES = sql`mastra.mastra_messages`;
/**
 * Mastra reads `createdAtZ` first, and `createdAt` (UTC, without a zone) for older rows; as ISO
 * text with whole milliseconds, as its driver's Date holds it.
 */
const CREATED_AT = sql`to_char(coalesce("createdAtZ", "createdAt" at time zone 'UTC') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Every message of a branch's memory thread, oldest first. */
export async function readBranchMessages(q: Queryable, memoryThreadId: string): Promise<StoredMessage[]> {
  const rows = await selectBranchMessages(q, { memoryThreadId });
  return rows.map((row) => toStoredMessage(row, memoryThreadId));
}

/** Read by every thread detail: built once (preparedSql). */
const selectBranchMessages = preparedSql<{ memoryThreadId: string }, MessageRow>(
  'branch_messages',
  sql`
    select id, content, role, type, ${CREATED_AT} as created_at, "resourceId"
    from ${MESSAGES}
    where thread_id = ${sql.placeholder('memoryThreadId')}
    order by "createdAt" asc, id asc`,
);

// --- A branch's messages with their row versions (the thread detail's cache, ADR-051) -----------

/**
 * Each row's version mark: a 64-bit hash of its id and `xmin` (the transaction that wrote this
 * version of the row). Every UPDATE writes a new row version with a new `xmin`, whatever path wrote
 * it (Mastra's own saves, ours, another API process); a DELETE removes the row. So the count and
 * sum of the marks of a branch's messages up to one of them change when any of those rows changed,
 * went, or was added among them, and stay put while messages are only appended after it.
 */
const ROW_MARK = sql`hashtextextended(m.id || ':' || m.xmin::text, 0)`;
const MARKED_COLUMNS = sql`m.id, m.content, m.role, m.type, ${CREATED_AT} as created_at, m."resourceId",
  o.origin_id, ${ROW_MARK}::text as mark`;
/** Each message's origin by its key (see windowFrom). */
const WITH_ORIGIN = sql`left join lateral (
    select origin_id from message_origins
    where branch_id = ${sql.placeholder('branchId')} and message_id = m.id
    limit 1) o on true`;

interface MarkedRow extends MessageRow {
  origin_id: string | null;
  mark: string;
}

/** Read by a thread detail without a cached prefix: built once (preparedSql). */
const selectMarkedMessages = preparedSql<{ memoryThreadId: string; branchId: string }, MarkedRow>(
  'branch_messages_marked',
  sql`
    select ${MARKED_COLUMNS}
    from ${MESSAGES} m ${WITH_ORIGIN}
    where m.thread_id = ${sql.placeholder('memoryThreadId')}
    order by m."createdAt" asc, m.id asc`,
);

/** The stored message `afterId` of the branch, as the rows sort (a row value; null when absent). */
const AFTER = sql`(select "createdAt", id from ${MESSAGES}
  where id = ${sql.placeholder('afterId')} and thread_id = ${sql.placeholder('memoryThreadId')})`;

/** Read by a thread detail with a cached prefix: built once (preparedSql). */
const selectMarkedMessagesAfter = preparedSql<
  { memoryThreadId: string; branchId: string; afterId: string },
  MarkedRow
>(
  'branch_messages_marked_after',
  sql`
    select ${MARKED_COLUMNS}
    from ${MESSAGES} m ${WITH_ORIGIN}
    where m.thread_id = ${sql.placeholder('memoryThreadId')} and (m."createdAt", m.id) > ${AFTER}
    order by m."createdAt" asc, m.id asc`,
);

/** Read beside it: the marks of the cached prefix as they are now. Built once (preparedSql). */
const selectPrefixMarks = preparedSql<
  { memoryThreadId: string; afterId: string },
  { messages: number; marks: string }
>(
  'branch_prefix_marks',
  sql`
    select count(*)::int as messages, coalesce(sum(${ROW_MARK}), 0)::text as marks
    from ${MESSAGES} m
    where m.thread_id = ${sql.placeholder('memoryThreadId')} and (m."createdAt", m.id) <= ${AFTER}`,
);

/** Every message of a branch, oldest first, with its origin (null: its own) and version mark. */
export async function readMarkedBranchMessages(
  q: Queryable,
  branch: { id: string; memoryThreadId: string },
): Promise<MarkedMessage[]> {
  const rows = await selectMarkedMessages(q, { memoryThreadId: branch.memoryThreadId, branchId: branch.id });
  return rows.map((row) => toMarkedMessage(row, branch.memoryThreadId));
}

/**
 * The messages of a branch after its stored message `afterId` (none when that one is gone), and
 * the count and sum of the version marks of the messages up to it, included: one moment when read
 * in one snapshot.
 */
export async function readMarkedMessagesAfter(
  q: Queryable,
  branch: { id: string; memoryThreadId: string },
  afterId: string,
): Promise<{ after: MarkedMessage[]; prefix: { messages: number; marks: bigint } }> {
  const { memoryThreadId } = branch;
  const [rows, [prefix]] = await Promise.all([
    selectMarkedMessagesAfter(q, { memoryThreadId, branchId: branch.id, afterId }),
    selectPrefixMarks(q, { memoryThreadId, afterId }),
  ]);
  return {
    after: rows.map((row) => toMarkedMessage(row, memoryThreadId)),
    prefix: { messages: Number(prefix?.messages ?? 0), marks: BigInt(prefix?.marks ?? '0') },
  };
}

function toMarkedMessage(row: MarkedRow, memoryThreadId: string): MarkedMessage {
  return {
    message: toStoredMessage(row, memoryThreadId),
    originId: row.origin_id ?? row.id,
    mark: BigInt(row.mark),
    bytes: row.content.length,
  };
}

/**
 * The newest `limit` messages of a branch's memory thread, oldest first: a run's window (C3: the
 * runner measured how many of them the model gets) in one bounded query, however long the branch.
 */
export async function readNewestMessages(
  q: Queryable,
  memoryThreadId: string,
  limit: number,
): Promise<StoredMessage[]> {
  if (limit <= 0) return [];
  const rows = await selectNewestMessages(q, { memoryThreadId, limit: String(limit) });
  return rows.map((row) => toStoredMessage(row, memoryThreadId));
}

/** Read as every turn of the AI SDK driver starts: built once (preparedSql). */
const selectNewestMessages = preparedSql<{ memoryThreadId: string; limit: string }, MessageRow>(
  'newest_messages',
  sql`
    select * from (
      select id, content, role, type, ${CREATED_AT} as created_at, "resourceId", "createdAt" as sort_at
      from ${MESSAGES}
      where thread_id = ${sql.placeholder('memoryThreadId')} and role <> 'system'
      order by "createdAt" desc, id desc
      limit ${sql.placeholder('limit')}::int) newest
    order by sort_at asc, id asc`,
);

/**
 * A stored message of a branch's memory thread and every message after it, oldest first (empty
 * when `messageId` is not one of the thread's): one read of the tail, however long the branch.
 */
export async function readMessagesFrom(
  q: Queryable,
  memoryThreadId: string,
  messageId: string,
): Promise<StoredMessage[]> {
  const rows = await selectMessagesFrom(q, { memoryThreadId, messageId });
  return rows.map((row) => toStoredMessage(row, memoryThreadId));
}

/** Read as every turn settles (its messages made sure of): built once (preparedSql). */
const selectMessagesFrom = preparedSql<{ memoryThreadId: string; messageId: string }, MessageRow>(
  'messages_from',
  sql`
    select id, content, role, type, ${CREATED_AT} as created_at, "resourceId"
    from ${MESSAGES}
    where thread_id = ${sql.placeholder('memoryThreadId')}
      and ("createdAt", id) >= (
        select "createdAt", id from ${MESSAGES}
        where id = ${sql.placeholder('messageId')} and thread_id = ${sql.placeholder('memoryThreadId')})
    order by "createdAt" asc, id asc`,
);

/**
 * The ids and roles of a branch's messages from `fromMessageId` on (included), oldest first, and
 * whether a message of its own (not a copy of its parent's) comes before it. Reads only the tail.
 */
export async function readBranchTail(
  q: Queryable,
  branch: { id: string; memoryThreadId: string },
  fromMessageId: string,
): Promise<{ tail: Array<{ id: string; role: string }>; ownMessageBefore: boolean }> {
  const from = sql`(select "createdAt", id from ${MESSAGES} where id = ${fromMessageId} and thread_id = ${branch.memoryThreadId})`;
  const tail = await q.execute<{ id: string; role: string }>(sql`
    select id, role from ${MESSAGES}
    where thread_id = ${branch.memoryThreadId} and role <> 'system' and ("createdAt", id) >= ${from}
    order by "createdAt" asc, id asc`);
  const own = await q.execute<{ id: string }>(sql`
    select m.id from ${MESSAGES} m
    where m.thread_id = ${branch.memoryThreadId} and m.role <> 'system' and (m."createdAt", m.id) < ${from}
      and not exists (select 1 from message_origins o where o.branch_id = ${branch.id} and o.message_id = m.id)
    limit 1`);
  return { tail: [...tail], ownMessageBefore: own.length > 0 };
}

/** The ids of a branch's messages before `messageId` (a stored id), oldest first. */
export async function readMessageIdsBefore(
  q: Queryable,
  memoryThreadId: string,
  messageId: string,
): Promise<string[]> {
  const rows = await q.execute<{ id: string }>(sql`
    select id from ${MESSAGES}
    where thread_id = ${memoryThreadId} and role <> 'system'
      and ("createdAt", id) < (select "createdAt", id from ${MESSAGES} where id = ${messageId} and thread_id = ${memoryThreadId})
    order by "createdAt" asc, id asc`);
  return rows.map((row) => row.id);
}

/** The last user message before `messageId` (a stored id) in a branch's memory thread. */
export async function readUserMessageBefore(
  q: Queryable,
  memoryThreadId: string,
  messageId: string,
): Promise<StoredMessage | undefined> {
  const [row] = await q.execute<MessageRow>(sql`
    select id, content, role, type, ${CREATED_AT} as created_at, "resourceId"
    from ${MESSAGES}
    where thread_id = ${memoryThreadId} and role = 'user'
      and ("createdAt", id) < (select "createdAt", id from ${MESSAGES} where id = ${messageId} and thread_id = ${memoryThreadId})
    order by "createdAt" desc, id desc
    limit 1`);
  return row && toStoredMessage(row, memoryThreadId);
}

/** A stored message's role, when `messageId` is one of this memory thread's. */
export async function readMessageRole(
  q: Queryable,
  memoryThreadId: string,
  messageId: string,
): Promise<string | undefined> {
  const [row] = await q.execute<{ role: string }>(sql`
    select role from ${MESSAGES} where id = ${messageId} and thread_id = ${memoryThreadId}`);
  return row?.role;
}

// --- The model's window of a branch (C2, C3) ----------------------------------------------------

/**
 * Where the window's rows come from, in a prepared statement (values by name: `windowValues`):
 * from the marker on (`since`), or the whole branch. Each read below is prepared in both shapes.
 */
function windowFrom(since: boolean): SQL {
  const memoryThreadId = sql.placeholder('memoryThreadId');
  const from = since
    ? sql`and (m."createdAt", m.id) >= (
        coalesce(
          (select "createdAt" from ${MESSAGES} where id = ${sql.placeholder('startMessageId')} and thread_id = ${memoryThreadId}),
          ${sql.placeholder('startAt')}::timestamptz at time zone 'UTC'),
        coalesce(
          (select id from ${MESSAGES} where id = ${sql.placeholder('startMessageId')} and thread_id = ${memoryThreadId}),
          ''))`
    : sql``;
  return sql`
    from ${MESSAGES} m
    -- Each message's origin by its key, as its count below: a join planned on statistics from when
    -- the chat was short (a prepared statement keeps its plan) compared every message with every
    -- origin of the branch (ADR-051).
    left join lateral (
      select origin_id from message_origins
      where branch_id = ${sql.placeholder('branchId')} and message_id = m.id
      limit 1) o on true
    -- Each message's count by its key (limit 1 keeps the lookup a subquery the planner cannot
    -- flatten): a plain join is planned from statistics that lag behind a chat that grew, and on
    -- them compared every message with every count of the chat (quadratic; windowTally.test.ts).
    left join lateral (
      select tokens from message_token_counts
      where thread_id = ${sql.placeholder('threadId')} and message_id = coalesce(o.origin_id, m.id)
        and encoding = ${sql.placeholder('encoding')}
      limit 1) c on true
    where m.thread_id = ${memoryThreadId} and m.role <> 'system' ${from}`;
}

type WindowValues = Record<string, string>;

/** The values of `windowFrom`'s placeholders, for `scope`. */
function windowValues(scope: ModelWindowScope): WindowValues {
  const { branch, start, threadId, encoding } = scope;
  return {
    memoryThreadId: branch.memoryThreadId,
    branchId: branch.id,
    threadId,
    encoding,
    // A prepared statement's parameter goes as the server typed it: a timestamp as text.
    ...(start ? { startMessageId: start.messageId, startAt: start.at.toISOString() } : {}),
  };
}

/** A read of the window, prepared in its two shapes (from a marker on, or the whole branch). */
function windowRead<Row>(name: string, read: (from: SQL) => SQL) {
  const whole = preparedSql<WindowValues, Row>(name, read(windowFrom(false)));
  const sinceMarker = preparedSql<WindowValues, Row>(`${name}_since`, read(windowFrom(true)));
  return (q: Queryable, scope: ModelWindowScope) =>
    (scope.start ? sinceMarker : whole)(q, windowValues(scope));
}

// Read as every turn starts and settles (its window measured): built once (preparedSql).
const selectWindowTally = windowRead<{
  messages: string | number;
  tokens: string | number | null;
  uncounted: string;
}>(
  'window_tally',
  (from) => sql`
    select count(*) as messages, sum(c.tokens) as tokens,
      coalesce(
        json_agg(json_build_array(coalesce(o.origin_id, m.id), m.content)) filter (where c.tokens is null),
        '[]'::json)::text as uncounted
    ${from}`,
);
const selectModelWindow = windowRead<{
  id: string;
  role: string;
  created_at: string;
  tokens: number | null;
  content: string;
}>(
  'window_messages',
  (from) => sql`
    select m.id, m.role, ${CREATED_AT} as created_at,
      c.tokens, m.content ${from}
    order by m."createdAt" asc, m.id asc`,
);

/**
 * How many messages the window holds, their tokens (a sum of stored counts; uncounted ones add 0),
 * and the ones with no count yet (normally the last turn's), with their content: one statement, so
 * the sum and the uncounted are read at one moment (a count another reader adds in between is
 * neither missed nor counted twice), and a run's first word waits for one round trip.
 */
export async function tallyModelWindow(q: Queryable, scope: ModelWindowScope): Promise<ModelWindowTally> {
  const [row] = await selectWindowTally(q, scope);
  const uncounted = JSON.parse(row?.uncounted ?? '[]') as Array<[string, string]>;
  return {
    messages: Number(row?.messages ?? 0),
    tokens: Number(row?.tokens ?? 0),
    uncounted: uncounted.map(([originId, content]) => ({ originId, content: parseContent(content) })),
  };
}

/** The window's messages, oldest first, with their counts and content (what a compaction splits). */
export async function readModelWindow(q: Queryable, scope: ModelWindowScope): Promise<WindowMessage[]> {
  const rows = await selectModelWindow(q, scope);
  return rows.map((row) => ({
    id: row.id,
    role: row.role,
    createdAt: new Date(row.created_at),
    tokens: Number(row.tokens ?? 0),
    content: parseContent(row.content),
  }));
}

function parseContent(text: string): StoredContent {
  try {
    return JSON.parse(text) as StoredContent;
  } catch {
    return { format: 2, parts: [{ type: 'text', text }] } as StoredContent;
  }
}

/** As `@mastra/pg` parses a row (its `parseRow`): `type` only when it is not the default `v2`. */
function toStoredMessage(row: MessageRow, memoryThreadId: string): StoredMessage {
  let content: unknown = row.content;
  try {
    content = JSON.parse(row.content);
  } catch {}
  return {
    id: row.id,
    content,
    role: row.role,
    createdAt: new Date(row.created_at),
    threadId: memoryThreadId,
    resourceId: row.resourceId ?? undefined,
    ...(row.type && row.type !== 'v2' ? { type: row.type } : {}),
  } as StoredMessage;
}

// --- A new chat's memory, in the caller's transaction --------------------------------------------

/** Rows per INSERT: a few thousand parameters at most, whatever the size of the chat. */
const INSERT_BATCH = 500;

/** Memory threads (one per branch) of `resourceId`, as `saveThread` writes them. */
export async function insertMemoryThreads(
  q: Queryable,
  threadIds: string[],
  resourceId: string,
): Promise<void> {
  for (let start = 0; start < threadIds.length; start += INSERT_BATCH) {
    const ids = threadIds.slice(start, start + INSERT_BATCH);
    await q.execute(sql`
      insert into mastra.mastra_threads (id, "resourceId", title, metadata, "createdAt", "createdAtZ", "updatedAt", "updatedAtZ")
      select id, ${resourceId}, '', '{}'::jsonb, now() at time zone 'UTC', now(), now() at time zone 'UTC', now()
      from unnest(${textArray(ids)}) as t(id)`);
  }
}

/**
 * Messages, as `saveMessages` writes them: `createdAt` in UTC without a zone and `createdAtZ` with
 * one, type `v2`. Their order in a thread is Mastra's (`createdAt`, then id).
 */
export async function insertMemoryMessages(
  q: Queryable,
  messages: readonly NewStoredMessage[],
): Promise<void> {
  for (let start = 0; start < messages.length; start += INSERT_BATCH) {
    const batch = messages.slice(start, start + INSERT_BATCH);
    const column = (pick: (message: NewStoredMessage) => string) => textArray(batch.map(pick));
    await q.execute(sql`
      insert into ${MESSAGES} (id, thread_id, content, "createdAt", "createdAtZ", role, type, "resourceId")
      select m.id, m.thread_id, m.content, m.created::timestamptz at time zone 'UTC', m.created::timestamptz, m.role, 'v2', m.resource
      from unnest(
        ${column((message) => message.id)},
        ${column((message) => message.threadId)},
        ${column((message) => message.content)},
        ${column((message) => message.createdAt.toISOString())},
        ${column((message) => message.role)},
        ${column((message) => message.resourceId)}
      ) as m(id, thread_id, content, created, role, resource)`);
  }
}

/**
 * A turn's messages written into their memory thread, as Mastra's `saveMessages` writes them (an
 * upsert by id, type `v2` unless given, the thread's `updatedAt` touched), the thread made first
 * when it does not exist yet (as Mastra's `saveThread` makes an empty one): one statement per
 * batch. Mastra's own took six statements on its own connections for a turn (the thread read
 * twice, then begin, insert, update, commit) and every message through its MessageList, which
 * hands format-2 messages on unchanged.
 */
export async function saveConversationMessages(
  q: Queryable,
  conversation: { memoryThreadId: string; resourceId: string },
  messages: readonly (NewStoredMessage & { type?: string })[],
): Promise<void> {
  for (let start = 0; start < messages.length; start += INSERT_BATCH) {
    const batch = messages.slice(start, start + INSERT_BATCH);
    const column = (pick: (message: NewStoredMessage & { type?: string }) => string) =>
      textArrayLiteral(batch.map(pick));
    // Each batch's statement is sent within this call (a settle sends its user message's lineage
    // next, which reads the first batch: statements on one connection run in the order sent).
    await saveMessageRows(q, {
      memoryThreadId: conversation.memoryThreadId,
      resourceId: conversation.resourceId,
      ids: column((message) => message.id),
      threadIds: column((message) => message.threadId),
      contents: column((message) => message.content),
      createdAts: column((message) => message.createdAt.toISOString()),
      roles: column((message) => message.role),
      types: column((message) => message.type ?? 'v2'),
      resources: column((message) => message.resourceId),
    });
  }
}

/**
 * Written as every turn settles: built once (preparedSql), like the other statements a settle
 * sends, so it goes out in the order it is called among them.
 */
const saveMessageRows = preparedSql<
  Record<
    | 'memoryThreadId'
    | 'resourceId'
    | 'ids'
    | 'threadIds'
    | 'contents'
    | 'createdAts'
    | 'roles'
    | 'types'
    | 'resources',
    string
  >
>(
  'save_messages',
  sql`
    with conversation as (
      insert into mastra.mastra_threads (id, "resourceId", title, metadata, "createdAt", "createdAtZ", "updatedAt", "updatedAtZ")
      values (${sql.placeholder('memoryThreadId')}, ${sql.placeholder('resourceId')}, '', '{}'::jsonb,
        now() at time zone 'UTC', now(), now() at time zone 'UTC', now())
      on conflict (id) do update set "updatedAt" = excluded."updatedAt", "updatedAtZ" = excluded."updatedAtZ"
    )
    insert into ${MESSAGES} (id, thread_id, content, "createdAt", "createdAtZ", role, type, "resourceId")
    select m.id, m.thread_id, m.content, m.created::timestamptz at time zone 'UTC', m.created::timestamptz, m.role, m.type, m.resource
    from unnest(
      ${sql.placeholder('ids')}::text[],
      ${sql.placeholder('threadIds')}::text[],
      ${sql.placeholder('contents')}::text[],
      ${sql.placeholder('createdAts')}::text[],
      ${sql.placeholder('roles')}::text[],
      ${sql.placeholder('types')}::text[],
      ${sql.placeholder('resources')}::text[]
    ) as m(id, thread_id, content, created, role, type, resource)
    on conflict (id) do update set thread_id = excluded.thread_id, content = excluded.content,
      role = excluded.role, type = excluded.type, "resourceId" = excluded."resourceId"`,
);

/**
 * A new memory thread `to` holding a copy of the messages `messageIds` of thread `from`, as
 * Mastra's `copyThread` makes one (each copy a new id, with the same content, time, role and
 * type), in the caller's transaction and one statement per batch (Mastra's inserts one row a
 * round trip). Returns each copy's id by the copied message's id; throws when one is not `from`'s.
 */
export async function copyMemoryMessages(
  q: Queryable,
  copy: { from: string; to: string; resourceId: string; messageIds: readonly string[] },
): Promise<Map<string, string>> {
  await insertMemoryThreads(q, [copy.to], copy.resourceId);
  const copies = new Map(copy.messageIds.map((id) => [id, crypto.randomUUID()]));
  const pairs = [...copies];
  for (let start = 0; start < pairs.length; start += INSERT_BATCH) {
    const batch = pairs.slice(start, start + INSERT_BATCH);
    const written = await q.execute<{ id: string }>(sql`
      insert into ${MESSAGES} (id, thread_id, content, "createdAt", "createdAtZ", role, type, "resourceId")
      select c.copy, ${copy.to}, m.content, m."createdAt", m."createdAtZ", m.role, m.type, ${copy.resourceId}
      from unnest(${textArray(batch.map(([source]) => source))}, ${textArray(batch.map(([, id]) => id))})
        as c(source, copy)
      join ${MESSAGES} m on m.id = c.source and m.thread_id = ${copy.from}
      returning id`);
    if (written.length !== batch.length) {
      throw new Error(`copied ${written.length} of ${batch.length} messages of memory thread ${copy.from}`);
    }
  }
  return copies;
}

/**
 * Messages deleted by id, in the caller's transaction: Mastra's `deleteMessages` commits on its
 * own connection, so a change that then rolled back (an outage, a kill) had lost them anyway.
 */
export async function deleteMemoryMessages(q: Queryable, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await q.execute(sql`delete from ${MESSAGES} where id = any(${textArray(messageIds)})`);
}

// --- Lineage rows, from the stored order -------------------------------------------------------

const CREATED_AT_Z = sql`coalesce(m."createdAtZ", m."createdAt" at time zone 'UTC')`;

/**
 * Writes the lineage rows of every user message of a branch from its stored transcript (a new
 * version's copies). Linear in the branch's length; run where the branch was just made.
 */
export async function writeBranchLineage(q: Queryable, branchId: string): Promise<void> {
  await q.execute(sql`
    insert into message_lineage (thread_id, branch_id, message_id, parent_id, created_at)
    select s.thread_id, s.branch_id, s.origin, coalesce(s.parent, ''), s.created
    from (
      select b.thread_id, b.id as branch_id, m.role, coalesce(o.origin_id, m.id) as origin,
        lag(coalesce(o.origin_id, m.id)) over (order by m."createdAt", m.id) as parent,
        ${CREATED_AT_Z} as created
      from branches b
      join ${MESSAGES} m on m.thread_id = b.memory_thread_id and m.role <> 'system'
      left join message_origins o on o.branch_id = b.id and o.message_id = m.id
      where b.id = ${branchId}
    ) s
    where s.role = 'user'
    on conflict (branch_id, message_id) do update
      set parent_id = excluded.parent_id, created_at = excluded.created_at`);
}

/**
 * Writes the lineage row of one stored user message of a branch (a settled turn's), its parent
 * being the message stored just before it. Nothing when the message is not (or no longer) stored.
 */
export async function writeUserMessageLineage(
  q: Queryable,
  branchId: string,
  messageId: string,
): Promise<void> {
  await insertUserMessageLineage(q, { branchId, messageId });
}

/** Written as every turn settles: built once (preparedSql). */
const insertUserMessageLineage = preparedSql<{ branchId: string; messageId: string }>(
  'user_message_lineage',
  sql`
    insert into message_lineage (thread_id, branch_id, message_id, parent_id, created_at)
    select b.thread_id, b.id, coalesce(o.origin_id, m.id),
      coalesce((
        select coalesce(po.origin_id, p.id) from ${MESSAGES} p
        left join message_origins po on po.branch_id = b.id and po.message_id = p.id
        where p.thread_id = m.thread_id and p.role <> 'system' and (p."createdAt", p.id) < (m."createdAt", m.id)
        order by p."createdAt" desc, p.id desc
        limit 1
      ), ''),
      ${CREATED_AT_Z}
    from branches b
    join ${MESSAGES} m on m.thread_id = b.memory_thread_id and m.id = ${sql.placeholder('messageId')} and m.role = 'user'
    left join message_origins o on o.branch_id = b.id and o.message_id = m.id
    where b.id = ${sql.placeholder('branchId')}
    on conflict (branch_id, message_id) do update
      set parent_id = excluded.parent_id, created_at = excluded.created_at`,
);

/** A branch's last message (not a system one) by origin id, or '' when it holds none. */
const BRANCH_TAIL = (branch: SQL) => sql`coalesce((
  select coalesce(o.origin_id, m.id) from ${MESSAGES} m
  left join message_origins o on o.branch_id = ${branch}.id and o.message_id = m.id
  where m.thread_id = ${branch}.memory_thread_id and m.role <> 'system'
  order by m."createdAt" desc, m.id desc
  limit 1
), '')`;

/**
 * Records the branch's last message as a fork of its thread (`lineage_forks`, ADR-056): what the
 * branch holds next goes after it, and may differ from what another branch holds there. Run where
 * that becomes possible: a new version's copies just made (before its own message), a branch's
 * latest messages just deleted.
 */
export async function markBranchTailFork(q: Queryable, branchId: string): Promise<void> {
  await q.execute(sql`
    insert into lineage_forks (thread_id, parent_id)
    select b.thread_id, ${BRANCH_TAIL(sql`b`)} from branches b where b.id = ${branchId}
    on conflict do nothing`);
}

/**
 * Records every fork of a thread written whole (an import, a copy): each message under which its
 * lineage rows hold more than one user message, and each live branch's last message (what comes
 * next there may differ from another branch's). Run after its lineage rows are written.
 */
export async function markThreadForks(q: Queryable, threadId: string): Promise<void> {
  await q.execute(sql`
    insert into lineage_forks (thread_id, parent_id)
    select thread_id, parent_id from message_lineage where thread_id = ${threadId}
    group by thread_id, parent_id having count(distinct message_id) > 1
    union
    select b.thread_id, ${BRANCH_TAIL(sql`b`)} from branches b
    where b.thread_id = ${threadId} and b.removed_at is null
    on conflict do nothing`);
}

/** Deletes the lineage rows of `messageIds` (origin ids) whose message is really gone from the branch. */
export async function deleteLineageOfGoneMessages(
  q: Queryable,
  branchId: string,
  messageIds: string[],
): Promise<void> {
  if (messageIds.length === 0) return;
  await q.execute(sql`
    delete from message_lineage l
    using branches b
    where l.branch_id = ${branchId} and b.id = l.branch_id and l.message_id = any(${textArray(messageIds)})
      and not exists (
        select 1 from ${MESSAGES} m
        left join message_origins o on o.branch_id = b.id and o.message_id = m.id
        where m.thread_id = b.memory_thread_id and coalesce(o.origin_id, m.id) = l.message_id
      )`);
}

// --- An account's rows ----------------------------------------------------------------------------

/*
 * Mastra's tables have no foreign keys: their `resourceId` is the user id and their `thread_id` a
 * branch's memory thread id. Which tables have those columns is read from the catalog, so a table a
 * later Mastra adds is moved and deleted with the rest.
 */
const RESOURCE_COLUMNS = ['resourceId', 'resource_id'];
const THREAD_COLUMNS = ['thread_id', 'threadId'];
/** Mastra's per-resource table is keyed by the resource id itself. */
const RESOURCES_TABLE = 'mastra_resources';
const THREADS_TABLE = 'mastra_threads';

interface ColumnRef {
  table: string;
  column: string;
}

const listOf = (values: string[]) =>
  sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  );

const mastraTable = (table: string): SQL => sql`${sql.identifier(MASTRA_SCHEMA)}.${sql.identifier(table)}`;

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

/** Every Mastra row under resource `from` becomes `to`'s. Running it again moves nothing more. */
export async function moveMemoryRowsOfUser(q: Queryable, from: string, to: string): Promise<void> {
  for (const ref of await mastraColumns(q, RESOURCE_COLUMNS)) {
    const column = sql.identifier(ref.column);
    await q.execute(sql`UPDATE ${mastraTable(ref.table)} SET ${column} = ${to} WHERE ${column} = ${from}`);
  }
  if (await mastraHasTable(q, RESOURCES_TABLE)) {
    const table = mastraTable(RESOURCES_TABLE);
    // The account's own resource row wins; the guest's is then dropped.
    await q.execute(sql`
      UPDATE ${table} SET id = ${to}
      WHERE id = ${from} AND NOT EXISTS (SELECT 1 FROM ${table} WHERE id = ${to})`);
    await q.execute(sql`DELETE FROM ${table} WHERE id = ${from}`);
  }
}

/** Deletes every Mastra row of a user: by resource id, and by the memory threads of their branches. */
export async function deleteMemoryRowsOfUser(
  q: Queryable,
  userId: string,
  memoryThreadIds: string[],
): Promise<void> {
  for (const ref of await mastraColumns(q, RESOURCE_COLUMNS)) {
    await q.execute(
      sql`DELETE FROM ${mastraTable(ref.table)} WHERE ${sql.identifier(ref.column)} = ${userId}`,
    );
  }
  if (memoryThreadIds.length > 0) {
    const ids = listOf(memoryThreadIds);
    for (const ref of await mastraColumns(q, THREAD_COLUMNS)) {
      await q.execute(
        sql`DELETE FROM ${mastraTable(ref.table)} WHERE ${sql.identifier(ref.column)} IN (${ids})`,
      );
    }
    if (await mastraHasTable(q, THREADS_TABLE)) {
      await q.execute(sql`DELETE FROM ${mastraTable(THREADS_TABLE)} WHERE id IN (${ids})`);
    }
  }
  if (await mastraHasTable(q, RESOURCES_TABLE)) {
    await q.execute(sql`DELETE FROM ${mastraTable(RESOURCES_TABLE)} WHERE id = ${userId}`);
  }
}
