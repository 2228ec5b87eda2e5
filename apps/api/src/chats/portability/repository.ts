import type { Attachment, DrainMode, FeedbackRating, HitlStatus } from '@chat/contracts';
import type { Queryable, ThreadRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, or } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';
import { toAttachment } from '../attachments/repository';
import { statusIn } from '../turns/lifecycle';

/**
 * SQL of taking a chat anywhere (P1-P4): what an export leaves out, and the rows a new chat is
 * written with (its images, feedback, notes and approvals; turns are written by the turn
 * lifecycle, messages by the transcript store, chats/transcript/). Each write is one statement per
 * batch, inside the caller's transaction.
 */

const {
  attachments,
  branches,
  chatTurnRequests: turns,
  hitlRequests,
  messageFeedback,
  notes,
  threads,
} = schema;

/** Rows per INSERT, so a statement's parameters stay bounded however long the chat. */
const BATCH = 1_000;

async function inBatches<T>(values: readonly T[], write: (batch: T[]) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < values.length; start += BATCH) await write(values.slice(start, start + BATCH));
}

/**
 * The messages (ids as streamed, which are their origin ids) of the thread's turns that have not
 * settled: the running one and any failed attempt waiting at the head. An export and a fork end
 * before the first of them, as a share does.
 */
export async function listUnsettledMessageIds(q: Queryable, threadId: string): Promise<Set<string>> {
  const rows = await q
    .select({ userMessageId: turns.userMessageId, assistantMessageId: turns.assistantMessageId })
    .from(turns)
    .where(and(eq(turns.threadId, threadId), or(statusIn('active'), statusIn('waiting'))));
  return new Set(
    rows.flatMap((row) => [row.userMessageId, row.assistantMessageId].filter((id) => id !== null)),
  );
}

/**
 * A new chat's row, before its branches (`activeBranchId` is set once they exist). Its title is
 * final: the first message sent in it does not rename it.
 */
export async function insertNewChatThread(
  q: Queryable,
  values: {
    ownerId: string;
    title: string;
    drainMode: DrainMode;
    forkedFromThreadId?: string;
    forkedFromMessageId?: string;
  },
): Promise<ThreadRow> {
  const [row] = await q
    .insert(threads)
    .values({ ...values, titled: true })
    .returning();
  if (!row) throw new InvariantError('insert returned no thread');
  return row;
}

/**
 * A new chat's branches, one per version, each its own memory thread (ADR-010). Their creation
 * times follow the versions' order, so a later export lists them in the same order.
 */
export async function insertVersionBranches(
  q: Queryable,
  threadId: string,
  rows: ReadonlyArray<{
    id: string;
    parentBranchId: string | null;
    forkMessageId: string | null;
    lastActiveAt: Date;
  }>,
): Promise<void> {
  const first = Date.now();
  await inBatches(
    rows.map((row, index) => ({ ...row, index })),
    (batch) =>
      q.insert(branches).values(
        batch.map(({ index, ...row }) => ({
          ...row,
          threadId,
          memoryThreadId: row.id,
          createdAt: new Date(first + index),
        })),
      ),
  );
}

/** Describes a new chat's images (their bytes go to the attachment storage), all sent already. */
export async function insertSentAttachments(
  q: Queryable,
  threadId: string,
  ownerId: string,
  images: ReadonlyArray<Omit<Attachment, 'id'>>,
): Promise<Attachment[]> {
  const created: Attachment[] = [];
  const sentAt = new Date();
  await inBatches(images, async (batch) => {
    const rows = await q
      .insert(attachments)
      .values(batch.map((image) => ({ ...image, threadId, ownerId, sentAt })))
      .returning();
    created.push(...rows.map(toAttachment));
  });
  return created;
}

export async function insertFeedbackRows(
  q: Queryable,
  rows: ReadonlyArray<{
    userId: string;
    threadId: string;
    messageId: string;
    rating: FeedbackRating;
    comment: string | null;
  }>,
): Promise<void> {
  await inBatches(rows, (batch) => q.insert(messageFeedback).values(batch));
}

export async function insertNotes(
  q: Queryable,
  threadId: string,
  rows: ReadonlyArray<{ text: string; createdAt: Date }>,
): Promise<void> {
  await inBatches(rows, (batch) => q.insert(notes).values(batch.map((row) => ({ ...row, threadId }))));
}

/**
 * Decided approvals copied with their tool calls. They never resume a run (that ran elsewhere), so
 * they name none.
 */
export async function insertDecidedApprovals(
  q: Queryable,
  threadId: string,
  rows: ReadonlyArray<{
    turnId: string;
    toolName: string;
    toolCallId: string;
    args: unknown;
    status: Exclude<HitlStatus, 'pending'>;
    createdAt: Date;
    decidedAt: Date | null;
  }>,
): Promise<void> {
  await inBatches(rows, (batch) =>
    q
      .insert(hitlRequests)
      .values(batch.map((row) => ({ ...row, args: row.args ?? {}, threadId, runId: '' }))),
  );
}
