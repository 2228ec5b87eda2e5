import {
  type Attachment,
  drainModes,
  feedbackRatings,
  hitlStatuses,
  type TokenUsage,
  type ToolMode,
  type TurnStatusGroup,
  turnStatuses,
  turnStatusGroups,
} from '@chat/contracts';
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

import { user } from './authSchema';
import { createdAt, updatedAt } from './columns';

// --- Chat ---

const drainModeList = sql.raw(drainModes.map((mode) => `'${mode}'`).join(','));

export const threads = pgTable(
  'threads',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ownerId: text('owner_id')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    /** False until the first message names the thread (or the owner renames it). */
    titled: boolean('titled').notNull().default(false),
    activeBranchId: uuid('active_branch_id').references((): AnyPgColumn => branches.id),
    /** The owner paused the queue: nothing is claimed until it is resumed (a send is queued). */
    queuePaused: boolean('queue_paused').notNull().default(false),
    /**
     * Who claims the queue head (Q15): `viewer`, an attached page (Q10); `background`, the server,
     * with or without a page open. New chats take the API's `QUEUE_DRAIN`.
     */
    drainMode: text('drain_mode', { enum: drainModes }).notNull().default('viewer'),
    /**
     * The tools whose mode the owner changed in this chat (T1), by name; every other tool takes the
     * server's default. Read at each step of a running reply (T2). Never in a share or export.
     */
    toolModes: jsonb('tool_modes').$type<Record<string, ToolMode>>().notNull().default({}),
    /**
     * The chat this one was forked from ("New chat from here", P3) and the message (as its owner
     * sees it) it was copied up to: a link back, nothing more. Cleared when that chat is deleted.
     */
    forkedFromThreadId: uuid('forked_from_thread_id').references((): AnyPgColumn => threads.id, {
      onDelete: 'set null',
    }),
    forkedFromMessageId: text('forked_from_message_id'),
    /**
     * The chat's model (M2), an id of the API's configured models; null: the default model. Read
     * when a turn is claimed, so a queued turn runs with the model chosen by then.
     */
    model: text('model'),
    /** The chat's own instructions (M4), given to the model after the account's; '' when none. */
    instructions: text('instructions').notNull().default(''),
    /**
     * A1: an agent chat's workspace, as the deployment's list names it (`AGENT_WORKSPACES`), and
     * the directory the agent works in (resolved, under that workspace; checked again at each run).
     * Null on a plain chat.
     */
    workspaceId: text('workspace_id'),
    workspacePath: text('workspace_path'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // The thread list pages by (updated_at, id), newest first: one index range per page.
  (t) => [
    index('threads_owner_updated_id_idx').on(t.ownerId, t.updatedAt, t.id),
    check('threads_drain_mode_check', sql`${t.drainMode} in (${drainModeList})`),
  ],
);

/**
 * A1: which account a workspace of `AGENT_WORKSPACES` belongs to. The first account to start an
 * agent chat on it takes it; nobody else can start one there while that account exists (its
 * agent's files stay its own). Moves with the account when a guest signs up; freed when the
 * account is deleted.
 */
export const agentWorkspaceOwners = pgTable('agent_workspace_owners', {
  workspaceId: text('workspace_id').primaryKey(),
  ownerId: text('owner_id')
    .notNull()
    .references(() => user.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
});

/**
 * A version of a thread's conversation. Each branch is its own Mastra memory thread, because
 * Mastra's recall knows nothing of branches: siblings sharing one would leak into each other's context.
 */
export const branches = pgTable(
  'branches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    memoryThreadId: text('memory_thread_id').notNull().unique(),
    /** Lineage only: a parent may go (its last version deleted) while its children stay. */
    parentBranchId: uuid('parent_branch_id').references((): AnyPgColumn => branches.id, {
      onDelete: 'set null',
    }),
    /** The parent's user message (by origin id) this branch replaces; null for the root branch. */
    forkMessageId: text('fork_message_id'),
    createdAt: createdAt(),
    /** When the person last had this branch selected; picks the branch shown for a version. */
    lastActiveAt: timestamp('last_active_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * Set when the version's own messages were all deleted: its transcript is gone, the row stays
     * so its turns keep their history (and the marks its copies in other versions show).
     */
    removedAt: timestamp('removed_at', { withTimezone: true }),
  },
  (t) => [index('branches_thread_idx').on(t.threadId)],
);

/**
 * Cloned messages get new ids in Mastra. This maps each copy to the message it was first created
 * as (its origin), so a message keeps one id for the person across versions. Messages created in a
 * branch itself have no row: their origin is their own id.
 */
export const messageOrigins = pgTable(
  'message_origins',
  {
    branchId: uuid('branch_id')
      .notNull()
      .references(() => branches.id, { onDelete: 'cascade' }),
    messageId: text('message_id').notNull(),
    originId: text('origin_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.branchId, t.messageId] })],
);

/** How a run can end: the final statuses a `settling` turn moves to. */
export const settleOutcomes = ['completed', 'interrupted', 'failed'] as const;
export type SettleOutcome = (typeof settleOutcomes)[number];

/**
 * A reply as its runner recorded it, in memory's own message shape (`format: 2` parts: text,
 * tool invocations with their results, step starts), message by message: the replies of a turn
 * and the steers it took in between them, oldest first.
 */
export interface ReplySnapshot {
  messages: Array<{
    id: string;
    role: 'user' | 'assistant';
    /** ISO time: where the message sorts in the transcript. */
    createdAt: string;
    parts: Array<{ type: string; [key: string]: unknown }>;
  }>;
}

/** The statuses a turn may have are the contract's; the column's CHECK lists the same ones. */
const turnStatusList = sql.raw(turnStatuses.map((status) => `'${status}'`).join(','));

/** A status group of the contract (`turnStatusGroups`) as the SQL list a partial index names. */
const statusGroupList = (group: TurnStatusGroup) =>
  sql.raw(turnStatusGroups[group].map((status) => `'${status}'`).join(', '));

/**
 * ChatTurnRequest: one row per send. Recording it is acceptance (Q1). Status moves only along the
 * contract's table (`turnTransitions`), through apps/api/src/chats/turns/lifecycle.ts.
 */
export const chatTurnRequests = pgTable(
  'chat_turn_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /**
     * Queue order. Taken from a sequence at insert, under the thread lock, so it follows the order
     * sends were accepted in (a timestamp would be each transaction's start time).
     */
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    /**
     * The order turns run in. A waiting item's place in the queue (Q13), below the two fixed rules
     * of queue order (a failed head, then steers): taken from a sequence of its own at insert, so a
     * new item goes last; a move reassigns the places of the movable items among themselves, so
     * those values stay below any later insert's. A claim takes a new value from the sequence, so
     * among the turns that ran it is the order they ran (and settled) in, whatever order they were
     * sent in: the handoff reads the last one (S5).
     */
    queuePosition: bigint('queue_position', { mode: 'number' }).notNull().generatedByDefaultAsIdentity(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    branchId: uuid('branch_id')
      .notNull()
      .references(() => branches.id, { onDelete: 'cascade' }),
    clientRequestId: text('client_request_id').notNull(),
    text: text('text').notNull(),
    /** The images the message carries, as described at send time (bytes: `attachments`). */
    attachments: jsonb('attachments').$type<Attachment[]>().notNull().default([]),
    status: text('status', { enum: turnStatuses }).notNull(),
    error: text('error'),
    /**
     * The run got the hidden interrupt-handoff instruction (S5). Decided at claim time from the
     * branch's state; a record of what the run got, not a request.
     */
    handoff: boolean('handoff').notNull().default(false),
    /**
     * Sent with `mode: 'steer'`. While `steer_pending` it waits for the running reply's next step;
     * requeued (the reply ended first) it sorts at the head, and its run gets the steer reminder.
     */
    steer: boolean('steer').notNull().default(false),
    /**
     * The runtime driver's opaque resume token (for the Mastra agent: the run id), kept with the
     * turn's final assistant message (`assistantMessageId`), failed turns included.
     */
    resumeToken: text('resume_token'),
    userMessageId: text('user_message_id'),
    assistantMessageId: text('assistant_message_id'),
    /** The model that wrote the reply (M2): its id, fixed when the turn is claimed. */
    model: text('model'),
    /** A regenerate's own model (M3); null: the chat's model when the turn is claimed. */
    requestedModel: text('requested_model'),
    /**
     * Visible reply text checkpointed while running; what a crash leaves behind. Cleared once the
     * reply is safely in memory.
     */
    partialText: text('partial_text').notNull().default(''),
    /**
     * The reply's messages as of its last step end (tool calls with their results, the steers it
     * took in, the text of each message so far), checkpointed beside `partialText` (the text of the
     * message streaming now, which grows between step ends). With `partialText` it is what a crash
     * leaves behind, and while `settling` the reply itself. Cleared with `partialText`.
     */
    partialParts: jsonb('partial_parts').$type<ReplySnapshot>(),
    /** The reply's token usage as the model reported it (C1), written when the turn settles. */
    usage: jsonb('usage').$type<TokenUsage>(),
    /** While `settling`: how the run ended, the status the turn takes once its reply is in memory. */
    outcome: text('outcome', { enum: settleOutcomes }),
    /** The API instance running it, and until when its heartbeat vouches for it. */
    runnerId: text('runner_id'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    createdAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    /**
     * Set when the turn's messages were deleted (the latest turn of a version, or its whole
     * version): its text is cleared, and it no longer counts as the branch's last settled turn.
     */
    removedAt: timestamp('removed_at', { withTimezone: true }),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('turns_thread_client_request_uq').on(t.threadId, t.clientRequestId),
    // Q5: at most one active turn per thread, whatever the number of API instances. A turn waiting
    // for a tool approval holds the slot too (Q12).
    uniqueIndex('turns_one_active_per_thread_uq')
      .on(t.threadId)
      .where(sql`${t.status} in (${statusGroupList('active')})`),
    index('turns_thread_status_seq_idx').on(t.threadId, t.status, t.seq),
    // Q15: the server's drain looks for chats with a queued head among the few queued turns there
    // are, not among all chats.
    index('turns_queued_thread_idx').on(t.threadId).where(sql`${t.status} = 'queued'`),
    // S5: the last settled turn of a branch (turns settle in the order claims stamp), read at
    // every claim.
    index('turns_branch_settled_position_idx')
      .on(t.branchId, t.queuePosition)
      .where(sql`${t.status} in (${statusGroupList('settled')}) and ${t.removedAt} is null`),
    check('turns_status_check', sql`${t.status} in (${turnStatusList})`),
    // A settling turn knows how it ends; no other turn carries an outcome.
    check('turns_outcome_check', sql`(${t.status} = 'settling') = (${t.outcome} is not null)`),
  ],
);

/**
 * A shared snapshot (H1): a sanitized copy of the shown version taken at share time, readable by
 * anyone with the token. Deleting the row revokes the link; deleting the thread deletes its rows.
 */
export const shares = pgTable(
  'shares',
  {
    /** At least 128 random bits, base64url: the only key a reader needs. */
    token: text('token').primaryKey(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    ownerId: text('owner_id')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    /** `SharedMessage[]` from @chat/contracts, built from an allow-list at share time. */
    messages: jsonb('messages').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('shares_thread_owner_idx').on(t.threadId, t.ownerId, t.createdAt)],
);

const feedbackRatingList = sql.raw(feedbackRatings.map((rating) => `'${rating}'`).join(','));

/**
 * Feedback (H2): one rating per person per assistant message, keyed by the id the person sees
 * (the message's origin id, the same in every version that holds it).
 */
export const messageFeedback = pgTable(
  'message_feedback',
  {
    userId: text('user_id')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    messageId: text('message_id').notNull(),
    rating: text('rating', { enum: feedbackRatings }).notNull(),
    comment: text('comment'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.threadId, t.messageId] }),
    check('message_feedback_rating_check', sql`${t.rating} in (${feedbackRatingList})`),
  ],
);

const hitlStatusList = sql.raw(hitlStatuses.map((status) => `'${status}'`).join(','));

/**
 * A tool call waiting for (or given) a person's decision (H3). The API owns this state (O2);
 * `run_id` and `tool_call_id` are what Mastra needs to resume the suspended run, from any instance.
 */
export const hitlRequests = pgTable(
  'hitl_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    turnId: uuid('turn_id')
      .notNull()
      .references(() => chatTurnRequests.id, { onDelete: 'cascade' }),
    toolName: text('tool_name').notNull(),
    toolCallId: text('tool_call_id').notNull(),
    runId: text('run_id').notNull(),
    args: jsonb('args').notNull(),
    status: text('status', { enum: hitlStatuses }).notNull().default('pending'),
    createdAt: createdAt(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
  },
  (t) => [
    index('hitl_requests_thread_idx').on(t.threadId, t.createdAt),
    // The thread's one active turn waits for at most one decision at a time.
    uniqueIndex('hitl_requests_one_pending_per_thread_uq').on(t.threadId).where(sql`${t.status} = 'pending'`),
    check('hitl_requests_status_check', sql`${t.status} in (${hitlStatusList})`),
  ],
);

/** Notes the `save_note` tool stored on a thread (after the person approved the call). */
export const notes = pgTable(
  'notes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    text: text('text').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('notes_thread_idx').on(t.threadId, t.createdAt)],
);

export type ThreadRow = typeof threads.$inferSelect;
export type BranchRow = typeof branches.$inferSelect;
export type TurnRow = typeof chatTurnRequests.$inferSelect;
export type ShareRow = typeof shares.$inferSelect;
export type MessageFeedbackRow = typeof messageFeedback.$inferSelect;
export type HitlRequestRow = typeof hitlRequests.$inferSelect;
export type NoteRow = typeof notes.$inferSelect;
