import type { FeedbackRating, MessageFeedback } from '@chat/contracts';
import type { MessageFeedbackRow, Queryable } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, type SQL, sql } from 'drizzle-orm';
import { textArray } from '../../platform/sqlArrays';

const { messageFeedback } = schema;

export function toMessageFeedback(row: Pick<MessageFeedbackRow, 'rating' | 'comment'>): MessageFeedback {
  return { rating: row.rating, ...(row.comment ? { comment: row.comment } : {}) };
}

/** Sets (or changes) one person's feedback on one message. */
export async function upsertFeedback(
  q: Queryable,
  key: { userId: string; threadId: string; messageId: string },
  value: { rating: FeedbackRating; comment: string | null },
): Promise<MessageFeedback> {
  const [row] = await q
    .insert(messageFeedback)
    .values({ ...key, ...value })
    .onConflictDoUpdate({
      target: [messageFeedback.userId, messageFeedback.threadId, messageFeedback.messageId],
      set: { ...value, updatedAt: new Date() },
    })
    .returning();
  return toMessageFeedback(row ?? value);
}

export async function deleteFeedback(
  q: Queryable,
  key: { userId: string; threadId: string; messageId: string },
): Promise<void> {
  await q
    .delete(messageFeedback)
    .where(
      and(
        eq(messageFeedback.userId, key.userId),
        eq(messageFeedback.threadId, key.threadId),
        eq(messageFeedback.messageId, key.messageId),
      ),
    );
}

/**
 * The person's feedback on the given messages of a thread, by message id: one query on the
 * primary key, however many messages are shown.
 */
export async function feedbackOfMessages(
  q: Queryable,
  userId: string,
  threadId: string,
  messageIds: string[],
): Promise<Map<string, MessageFeedback>> {
  if (messageIds.length === 0) return new Map();
  return await feedbackWhere(
    q,
    userId,
    threadId,
    sql`${messageFeedback.messageId} = any(${textArray(messageIds)})`,
  );
}

/**
 * The person's feedback on every message of a thread they rated (a row per rated message, of any
 * version), by message id: what a thread detail looks its shown messages up in, without sending
 * their ids (thousands in a long chat) to the database.
 */
export async function feedbackOfThread(
  q: Queryable,
  userId: string,
  threadId: string,
): Promise<Map<string, MessageFeedback>> {
  return await feedbackWhere(q, userId, threadId);
}

/** The person's feedback on a thread's messages, by message id, narrowed by `messages` if given. */
async function feedbackWhere(
  q: Queryable,
  userId: string,
  threadId: string,
  messages?: SQL,
): Promise<Map<string, MessageFeedback>> {
  const rows = await q
    .select({
      messageId: messageFeedback.messageId,
      rating: messageFeedback.rating,
      comment: messageFeedback.comment,
    })
    .from(messageFeedback)
    .where(and(eq(messageFeedback.userId, userId), eq(messageFeedback.threadId, threadId), messages));
  return new Map(rows.map((row) => [row.messageId, toMessageFeedback(row)]));
}
