import { index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { branches, threads } from './chatSchema';

/**
 * The conversation's lineage (B1, B2): one row per user message a branch holds, by origin id,
 * with the message before it in that branch (its parent; '' for the first). User messages sharing
 * a parent are versions of one another, so a thread detail finds the versions of the messages it
 * shows with an index lookup instead of reading every branch's transcript. Written where messages
 * come and go: a settled turn (its user message), a new version (the copies it holds), a deleted
 * turn; rows of a removed branch stay and are ignored with it.
 */
export const messageLineage = pgTable(
  'message_lineage',
  {
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    branchId: uuid('branch_id')
      .notNull()
      .references(() => branches.id, { onDelete: 'cascade' }),
    /** The user message, by the id the person sees (its origin). */
    messageId: text('message_id').notNull(),
    /** The origin id of the message before it in this branch; '' when it is the first. */
    parentId: text('parent_id').notNull(),
    /** When this branch's copy was created (orders versions, oldest first). */
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.branchId, t.messageId] }),
    index('message_lineage_thread_parent_idx').on(t.threadId, t.parentId),
  ],
);

export type MessageLineageRow = typeof messageLineage.$inferSelect;

/**
 * Where the thread's conversation may fork (ADR-056): every message (by origin id; '' for the
 * start) after which two branches can hold different user messages. A branch's next message goes
 * after its last one, so a message gains a second child only where a version was made after it
 * (an edit or a regenerate: the new branch's copies end there) or where a branch's messages after
 * it were deleted (a deleted latest turn, a failed attempt resolved); those writes add the row,
 * before the second child exists. Thread detail reads the lineage rows under these parents only,
 * instead of the rows of every user message it shows on every other branch. Rows are never
 * removed but with the thread: one that no longer forks costs a lookup, never a wrong version.
 */
export const lineageForks = pgTable(
  'lineage_forks',
  {
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    /** The origin id of the message the fork is after; '' for the start of the conversation. */
    parentId: text('parent_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.parentId] })],
);
