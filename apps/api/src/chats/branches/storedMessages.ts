import type { Queryable } from '@chat/db';
import type { MastraDBMessage } from '@mastra/core/agent';
import { sql } from 'drizzle-orm';

/**
 * A branch's messages read straight from Mastra's message table (schema `mastra`, see
 * agent/chatAgent.ts), in one query, in the order Mastra's own recall gives them (`createdAt`, then
 * id). Reading through `memory.recall` pushes every message through Mastra's MessageList, whose
 * cost grows with the square of the transcript; these readers stay linear.
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

const MESSAGES = sql`mastra.mastra_messages`;
/**
 * Mastra reads `createdAtZ` first, and `createdAt` (UTC, without a zone) for older rows; as ISO
 * text with whole milliseconds, as its driver's Date holds it.
 */
const CREATED_AT = sql`to_char(coalesce("createdAtZ", "createdAt" at time zone 'UTC') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Every message of a branch's memory thread, oldest first. */
export async function readBranchMessages(q: Queryable, memoryThreadId: string): Promise<MastraDBMessage[]> {
  const rows = await q.execute<MessageRow>(sql`
    select id, content, role, type, ${CREATED_AT} as created_at, "resourceId"
    from ${MESSAGES}
    where thread_id = ${memoryThreadId}
    order by "createdAt" asc, id asc`);
  return rows.map((row) => toStoredMessage(row, memoryThreadId));
}

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
): Promise<MastraDBMessage | undefined> {
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

/** As `@mastra/pg` parses a row (its `parseRow`): `type` only when it is not the default `v2`. */
function toStoredMessage(row: MessageRow, memoryThreadId: string): MastraDBMessage {
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
  } as MastraDBMessage;
}
