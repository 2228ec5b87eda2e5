import type { Attachment } from '@chat/contracts';
import type { AttachmentRow, Queryable } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import { InvariantError, notFound } from '../../platform/errors';
import { isIdShaped } from '../../platform/http';

const { attachments } = schema;

/** The columns that describe an attachment (never its bytes, which live in the storage). */
export function toAttachment(row: AttachmentRow): Attachment {
  const { id, name, mediaType, size, width, height, pages, words } = row;
  return {
    id,
    name,
    mediaType,
    size,
    width,
    height,
    ...(pages === null ? {} : { pages }),
    ...(words === null ? {} : { words }),
  };
}

export async function insertAttachment(
  q: Queryable,
  values: Omit<AttachmentRow, 'id' | 'createdAt' | 'sentAt'>,
): Promise<AttachmentRow> {
  const [row] = await q.insert(attachments).values(values).returning();
  if (!row) throw new InvariantError('insert returned no attachment');
  return row;
}

/** An attachment its owner may read; undefined for anyone else's (a 404 to them). */
export async function findOwnedAttachment(
  q: Queryable,
  id: string,
  ownerId: string,
): Promise<AttachmentRow | undefined> {
  const [row] = await q
    .select()
    .from(attachments)
    .where(and(eq(attachments.id, id), eq(attachments.ownerId, ownerId)));
  return row;
}

export async function findThreadAttachment(
  q: Queryable,
  threadId: string,
  id: string,
): Promise<AttachmentRow | undefined> {
  const [row] = await q
    .select()
    .from(attachments)
    .where(and(eq(attachments.id, id), eq(attachments.threadId, threadId)));
  return row;
}

/**
 * The attachments a message of `threadId` carries, in the order named, marked as sent (so the
 * sweep of unsent uploads leaves them). `404 not_found` when an id names nothing of this thread
 * and owner: another thread's or another person's upload is simply not found. Inside the caller's
 * transaction, so a refused send changes nothing.
 */
export async function attachmentsForMessage(
  q: Queryable,
  threadId: string,
  ownerId: string,
  ids: readonly string[],
): Promise<Attachment[]> {
  if (ids.length === 0) return [];
  const rows = await q
    .update(attachments)
    .set({ sentAt: new Date() })
    .where(
      and(
        eq(attachments.threadId, threadId),
        eq(attachments.ownerId, ownerId),
        inArray(attachments.id, [...ids]),
      ),
    )
    .returning();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = byId.get(id);
    if (!row) throw notFound('attachment');
    return toAttachment(row);
  });
}

/**
 * Descriptions of the given attachments that still exist (the model context names them); with
 * `threadId`, only that thread's own (an export or a continued share takes only its chat's
 * images). A reference that is not an id names nothing.
 */
export async function describeAttachments(
  q: Queryable,
  ids: readonly string[],
  threadId?: string,
): Promise<Map<string, Attachment>> {
  const wellFormed = ids.filter(isIdShaped);
  if (wellFormed.length === 0) return new Map();
  const rows = await q
    .select()
    .from(attachments)
    .where(
      and(
        inArray(attachments.id, wellFormed),
        threadId === undefined ? undefined : eq(attachments.threadId, threadId),
      ),
    );
  return new Map(rows.map((row) => [row.id, toAttachment(row)]));
}

/**
 * The documents of `ids` the model read only part of when their message ran (D1): how many pieces
 * (pages or lines) of how many. One indexed read of small columns, never the texts.
 */
export async function readDocumentCuts(
  q: Queryable,
  ids: readonly string[],
): Promise<Map<string, { read: number; of: number }>> {
  if (ids.length === 0) return new Map();
  const texts = schema.attachmentTexts;
  const rows = await q
    .select({ id: texts.attachmentId, read: texts.readPieces, of: texts.pieces })
    .from(texts)
    .where(and(inArray(texts.attachmentId, [...ids]), sql`${texts.readPieces} < ${texts.pieces}`));
  return new Map(
    rows.flatMap(({ id, read, of }) => (read === null || of === null ? [] : [[id, { read, of }]])),
  );
}

/** Deletes attachments (their bytes go with them); returns how many went. */
export async function deleteAttachments(q: Queryable, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await q
    .delete(attachments)
    .where(inArray(attachments.id, [...ids]))
    .returning({ id: attachments.id });
  return rows.length;
}

/** Deletes uploads no message ever carried that are older than `before`. */
export async function deleteUnsentBefore(q: Queryable, before: Date): Promise<number> {
  const rows = await q
    .delete(attachments)
    .where(and(isNull(attachments.sentAt), lt(attachments.createdAt, before)))
    .returning({ id: attachments.id });
  return rows.length;
}

/**
 * Deletes those of `ids` (attachments of `threadId`) that no message of the thread carries any
 * more: no turn that is neither removed nor cancelled names them. A version that kept an image
 * keeps it when the original message goes.
 */
export async function deleteUnreferencedAttachments(
  q: Queryable,
  threadId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const turns = schema.chatTurnRequests;
  const rows = await q
    .delete(attachments)
    .where(
      and(
        eq(attachments.threadId, threadId),
        inArray(attachments.id, [...ids]),
        sql`not exists (select 1 from ${turns} where ${turns.threadId} = ${threadId}
          and ${turns.removedAt} is null and ${turns.status} <> 'cancelled'
          and ${turns.attachments} @> jsonb_build_array(jsonb_build_object('id', ${attachments.id}::text)))`,
      ),
    )
    .returning({ id: attachments.id });
  return rows.length;
}

/** The ids of the attachments the given turns carry. */
export function attachmentIdsOfTurns(turns: readonly { attachments: readonly Attachment[] }[]): string[] {
  return [...new Set(turns.flatMap((turn) => turn.attachments.map((attachment) => attachment.id)))];
}
