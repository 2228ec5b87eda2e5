import type { Queryable, ReplySnapshot } from '@chat/db';
import { preparedQuery, preparedSql, schema } from '@chat/db';
import { and, eq, sql } from 'drizzle-orm';
import { textArrayLiteral } from '../../../platform/sqlArrays';
import { leaseFromNow, leaseFromNowPlaceholder, leaseInterval } from '../lease';
import { statusIn } from '../lifecycle';

/** The queries of a running turn: its checkpoints and its lease. */

const turns = schema.chatTurnRequests;

/** A turn some instance's runner is producing (it has a lease). */
const running = eq(turns.status, 'running');

/** What a running turn's checkpoint writes: the message streaming now and the reply's messages. */
export interface Checkpoint {
  /** The message streaming now, and all of its text. */
  assistantMessageId: string | null;
  partialText: string;
  /** The reply's messages, when a step ended since the last write (else they stay as they are). */
  partialParts?: ReplySnapshot;
}

/**
 * Checkpoints a running turn this runner holds, and renews its lease. Returns false when the turn
 * is no longer this runner's running turn (settled by someone else, or stopped).
 */
export async function checkpointRunningTurn(
  q: Queryable,
  turnId: string,
  runnerId: string,
  leaseMs: number,
  checkpoint: Checkpoint,
): Promise<boolean> {
  const values = {
    turnId,
    runnerId,
    partialText: checkpoint.partialText,
    assistantMessageId: checkpoint.assistantMessageId,
    lease: leaseInterval(leaseMs),
  };
  const rows = checkpoint.partialParts
    ? // As drizzle writes a jsonb column: its JSON text.
      await checkpointWithParts(q, { ...values, partialParts: JSON.stringify(checkpoint.partialParts) })
    : await checkpointText(q, values);
  return rows.length > 0;
}

/**
 * Adds the text that streamed since the last checkpoint (`delta`) to a running turn's checkpoint,
 * sending only the new text however long the reply: only if the stored text is still the
 * `knownBytes` long one this runner wrote last (else nothing changes, and the caller writes the
 * whole text). Renews the lease. Returns whether it was written.
 */
export async function appendCheckpointText(
  q: Queryable,
  turnId: string,
  runnerId: string,
  leaseMs: number,
  text: { delta: string; knownBytes: number },
): Promise<boolean> {
  const appended = await appendCheckpointTexts(q, runnerId, leaseMs, [{ turnId, ...text }]);
  return appended.has(turnId);
}

/** One running turn's text append (`appendCheckpointText`). */
export interface TextAppend {
  turnId: string;
  delta: string;
  knownBytes: number;
}

/**
 * `appendCheckpointText` for several running turns of this runner in one statement (one round
 * trip, one commit, whatever their number). Returns the ids of the turns whose text it appended;
 * the others are as they were (no longer this runner's, or holding another text than it knows).
 */
export async function appendCheckpointTexts(
  q: Queryable,
  runnerId: string,
  leaseMs: number,
  appends: readonly TextAppend[],
): Promise<Set<string>> {
  if (appends.length === 0) return new Set();
  const rows = await appendTexts(q, {
    runnerId,
    lease: leaseInterval(leaseMs),
    turnIds: textArrayLiteral(appends.map((append) => append.turnId)),
    deltas: textArrayLiteral(appends.map((append) => append.delta)),
    knownBytes: `{${appends.map((append) => append.knownBytes).join(',')}}`,
  });
  return new Set(rows.map((row) => row.id));
}

const appendTexts = preparedSql<
  { runnerId: string; lease: string; turnIds: string; deltas: string; knownBytes: string },
  { id: string }
>(
  'checkpoint_appends',
  sql`update "chat_turn_requests" as t
    set partial_text = t.partial_text || d.delta, lease_expires_at = now() + ${sql.placeholder('lease')}::interval
    from unnest(${sql.placeholder('turnIds')}::text[], ${sql.placeholder('deltas')}::text[], ${sql.placeholder('knownBytes')}::int[])
      as d(id, delta, known_bytes)
    where t.id::text = d.id and t.status = 'running' and t.runner_id = ${sql.placeholder('runnerId')}
      and octet_length(t.partial_text) = d.known_bytes
    returning t.id`,
);

// The checkpoint writes of every streaming reply: built once (preparedQuery).
/** This runner's running turn (the condition of every checkpoint write). */
const ownRunning = and(
  eq(turns.id, sql.placeholder('turnId')),
  running,
  eq(turns.runnerId, sql.placeholder('runnerId')),
);
const checkpointColumns = {
  partialText: sql`${sql.placeholder('partialText')}`,
  assistantMessageId: sql`${sql.placeholder('assistantMessageId')}`,
  leaseExpiresAt: leaseFromNowPlaceholder,
};
const checkpointText = preparedQuery('checkpoint_text', (q) =>
  q.update(turns).set(checkpointColumns).where(ownRunning).returning({ id: turns.id }),
);
const checkpointWithParts = preparedQuery('checkpoint_parts', (q) =>
  q
    .update(turns)
    .set({ ...checkpointColumns, partialParts: sql`${sql.placeholder('partialParts')}::jsonb` })
    .where(ownRunning)
    .returning({ id: turns.id }),
);
/**
 * Renews the lease of a turn this runner holds (running, or settling its reply). Returns false
 * when it no longer holds it.
 */
export async function renewLease(
  q: Queryable,
  turnId: string,
  runnerId: string,
  leaseMs: number,
): Promise<boolean> {
  const rows = await q
    .update(turns)
    .set({ leaseExpiresAt: leaseFromNow(leaseMs) })
    .where(and(eq(turns.id, turnId), statusIn('leased'), eq(turns.runnerId, runnerId)))
    .returning({ id: turns.id });
  return rows.length > 0;
}

/**
 * A3: the resume token kept on the newest finished turn of a branch that kept one (failed turns
 * too): what an agent's new connection resumes from. Null when none was kept.
 */
export async function newestResumeToken(q: Queryable, branchId: string): Promise<string | null> {
  const [row] = await q
    .select({ token: turns.resumeToken })
    .from(turns)
    .where(
      and(
        eq(turns.branchId, branchId),
        statusIn('ran'),
        sql`${turns.resumeToken} is not null and ${turns.removedAt} is null`,
      ),
    )
    // Turns of a branch finish in the order their claims stamp.
    .orderBy(sql`${turns.queuePosition} desc`)
    .limit(1);
  return row?.token ?? null;
}

/**
 * A7: where a version's agent session forks from, for a branch that kept no token of its own
 * yet: the token kept on the reply right before the message the version replaces (the newest
 * finished turn with a token before that message's turn, on the branch it ran on; through the
 * versions it came from when that branch has none before it). Null when the message was the
 * first (a fresh session is the fork), or was a steer taken into a reply (that reply's token is
 * past it: the version starts fresh), or the lineage is gone. One small read per version level.
 */
export async function forkPointToken(q: Queryable, branchId: string): Promise<string | null> {
  let current = branchId;
  // Versions nest; each level is a branch made from the one before it.
  for (let depth = 0; depth < 64; depth += 1) {
    const [branch] = await q
      .select({ forkMessageId: schema.branches.forkMessageId, threadId: schema.branches.threadId })
      .from(schema.branches)
      .where(eq(schema.branches.id, current))
      .limit(1);
    if (!branch?.forkMessageId) return null;
    const [replaced] = await q
      .select({ branchId: turns.branchId, position: turns.queuePosition, status: turns.status })
      .from(turns)
      .where(and(eq(turns.threadId, branch.threadId), eq(turns.userMessageId, branch.forkMessageId)))
      .limit(1);
    if (!replaced || replaced.status === 'delivered') return null;
    const [before] = await q
      .select({ token: turns.resumeToken })
      .from(turns)
      .where(
        and(
          eq(turns.branchId, replaced.branchId),
          statusIn('ran'),
          sql`${turns.resumeToken} is not null and ${turns.removedAt} is null`,
          sql`${turns.queuePosition} < ${replaced.position}`,
        ),
      )
      .orderBy(sql`${turns.queuePosition} desc`)
      .limit(1);
    if (before?.token) return before.token;
    current = replaced.branchId;
  }
  return null;
}
