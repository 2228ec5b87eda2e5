import { sql } from 'drizzle-orm';
import {
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { branches, threads } from './chatSchema';
import { createdAt } from './columns';

/**
 * Each message's token count (C2), counted once with the tokenizer of an encoding and kept: the
 * context meter and the compaction threshold are sums of these over the messages since a branch's
 * marker, never a tokenization of the whole branch. Keyed by the message's origin id, so the copies
 * a new version holds share their counts.
 */
export const messageTokenCounts = pgTable(
  'message_token_counts',
  {
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    /** The message by the id the person sees (its origin). */
    messageId: text('message_id').notNull(),
    /** The tokenizer's encoding (`o200k_base`, `cl100k_base`): a count holds for one encoding. */
    encoding: text('encoding').notNull(),
    tokens: integer('tokens').notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.messageId, t.encoding] })],
);

export const contextMarkerKinds = ['summary', 'cut'] as const;

/**
 * Where the model's view of a branch starts (C3): the older messages were summarized (`summary`),
 * or left out (`cut`: compaction is off, or a compaction failed and fell back to the newest
 * messages that fit). The transcript keeps every message; a marker only moves the model's window.
 * Each marker builds on the branch's previous one (`previous_id`); one successor per marker, so
 * two compactions racing on one branch cannot both land.
 */
export const contextMarkers = pgTable(
  'context_markers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    branchId: uuid('branch_id')
      .notNull()
      .references(() => branches.id, { onDelete: 'cascade' }),
    previousId: uuid('previous_id'),
    kind: text('kind', { enum: contextMarkerKinds }).notNull(),
    /** What the model gets instead of the messages before the marker (kind `summary`). */
    summary: text('summary'),
    /** Tokens of `summary`, counted once like a message's. */
    summaryTokens: integer('summary_tokens').notNull().default(0),
    /** A failed compaction's reason (the marker is then a cut). */
    error: text('error'),
    /** The first message the model still gets whole: its id in the branch's memory thread, and its time. */
    firstMessageId: text('first_message_id').notNull(),
    firstMessageAt: timestamp('first_message_at', { withTimezone: true, precision: 3 }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('context_markers_branch_created_idx').on(t.branchId, t.createdAt),
    unique('context_markers_branch_previous_uq').on(t.branchId, t.previousId).nullsNotDistinct(),
    check('context_markers_kind_check', sql`${t.kind} in ('summary', 'cut')`),
  ],
);

export type ContextMarkerRow = typeof contextMarkers.$inferSelect;
