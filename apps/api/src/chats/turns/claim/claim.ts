import { refusalMessages } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { sql } from 'drizzle-orm';
import { ApiError } from '../../../platform/errors';
import { readThreadModel } from '../../threads/choices';
import { leaseFromNow } from '../lease';
import { insertTurn, type NewClaim, type TurnChanges, transitionTurn } from '../lifecycle';
import { countRunningTurnsOf, countRunningTurnsOfOwner, lastSettledTurnOnBranch } from './repository';

/** What a claim refused for too many running turns suggests: replies take seconds. */
const RUNNING_TURNS_RETRY_S = 5;

export interface ClaimDeps {
  runnerId: string;
  leaseMs: number;
  /** The default model's id (M1): a chat that chose none runs with it. */
  modelName: string;
  maxRunningTurnsPerAccount?: number;
}

/** The runner's claim of a turn (see TurnRunner.claim), inside the caller's transaction. */
export async function claimTurn(
  tx: Queryable,
  turn: TurnRow,
  branchId: string,
  deps: ClaimDeps,
): Promise<TurnRow> {
  const limit = deps.maxRunningTurnsPerAccount ?? 0;
  const [running, lastSettled, chatModel] = await Promise.all([
    limit > 0 ? countRunningTurnsOfOwner(tx, turn.threadId) : 0,
    lastSettledTurnOnBranch(tx, branchId),
    turn.requestedModel ? null : readThreadModel(tx, turn.threadId),
  ]);
  assertUnderRunningCap(running, limit);
  const model = turn.requestedModel ?? chatModel ?? deps.modelName;
  return await transitionTurn(tx, turn, 'running', claimColumns(branchId, lastSettled, model, deps));
}

/** A turn accepted and claimed at once: what it is recorded with (`insertTurn`'s values). */
export type NewTurnValues = Parameters<typeof insertTurn>[2];

/**
 * `claimTurn` for a turn accepted in the same transaction (a send to an idle thread): recorded
 * running in one write instead of inserted queued and moved. `lastSettled`: the branch's last
 * settled turn when the caller read it already (with its own reads, one round trip fewer);
 * `chatModel`: the chat's model as the caller read it from the thread row it holds locked (the
 * same value a read here would get, one statement fewer).
 */
export async function claimNewTurn(
  tx: Queryable,
  values: NewTurnValues,
  known: { ownerId: string; lastSettled?: TurnRow | null; chatModel?: string | null },
  deps: ClaimDeps,
): Promise<TurnRow> {
  const limit = deps.maxRunningTurnsPerAccount ?? 0;
  const [running, lastSettled, chatModel] = await Promise.all([
    limit > 0 ? countRunningTurnsOf(tx, known.ownerId) : 0,
    known.lastSettled !== undefined ? known.lastSettled : lastSettledTurnOnBranch(tx, values.branchId),
    values.requestedModel
      ? null
      : known.chatModel !== undefined
        ? known.chatModel
        : readThreadModel(tx, values.threadId),
  ]);
  assertUnderRunningCap(running, limit);
  const model = values.requestedModel ?? chatModel ?? deps.modelName;
  return await insertTurn(tx, 'running', values, newClaim(lastSettled ?? undefined, model, deps));
}

function assertUnderRunningCap(running: number, limit: number): void {
  if (limit > 0 && running >= limit) {
    // The caller's transaction rolls back: nothing was accepted or claimed.
    throw new ApiError(
      'rate_limited',
      refusalMessages.rate_limited.runningTurns(limit),
      { retryAfter: RUNNING_TURNS_RETRY_S },
      { 'retry-after': String(RUNNING_TURNS_RETRY_S) },
    );
  }
}

/**
 * What a claim writes: this instance's lease, a new user message id, the hidden handoff (S5)
 * when the branch's last settled turn was interrupted, and the model that writes the reply (M2:
 * a regenerate's own, else the chat's as it is now, else the default). A model no longer configured
 * is written too: the run fails on it at the head (Q11), it never falls back to another.
 */
function newClaim(lastSettled: TurnRow | undefined, model: string, deps: ClaimDeps): NewClaim {
  return {
    handoff: lastSettled?.status === 'interrupted',
    runnerId: deps.runnerId,
    leaseMs: deps.leaseMs,
    startedAt: new Date(),
    userMessageId: crypto.randomUUID(),
    model,
  };
}

/** A claim of a turn that waited: `newClaim`, and what an earlier run of it left is reset. */
function claimColumns(
  branchId: string,
  lastSettled: TurnRow | undefined,
  model: string,
  deps: ClaimDeps,
): TurnChanges {
  const { leaseMs, ...claim } = newClaim(lastSettled, model, deps);
  return {
    branchId,
    ...claim,
    leaseExpiresAt: leaseFromNow(leaseMs),
    // The next place in the run order: the queue may have been reordered (Q13), so the turn that
    // runs now can have been sent before one that already ran. The last to settle stays the last.
    queuePosition: sql`default`,
    finishedAt: null,
    assistantMessageId: null,
    // A turn that failed unsettled (F1) kept its reply on the row; the new run starts empty.
    partialText: '',
    partialParts: null,
    outcome: null,
    error: null,
  };
}
