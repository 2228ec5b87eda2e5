import { refusalMessages } from '@chat/contracts';
import type { Queryable, TurnRow } from '@chat/db';
import { ApiError } from '../../../platform/errors';
import { transitionTurn } from '../lifecycle';
import { countRunningTurnsOfOwner, lastSettledTurnOnBranch, leaseFromNow } from './repository';

/** What a claim refused for too many running turns suggests: replies take seconds. */
const RUNNING_TURNS_RETRY_S = 5;

/** The runner's claim of a turn (see TurnRunner.claim), inside the caller's transaction. */
export async function claimTurn(
  tx: Queryable,
  turn: TurnRow,
  branchId: string,
  deps: { runnerId: string; leaseMs: number; modelName: string; maxRunningTurnsPerAccount?: number },
): Promise<TurnRow> {
  const limit = deps.maxRunningTurnsPerAccount ?? 0;
  const [running, lastSettled] = await Promise.all([
    limit > 0 ? countRunningTurnsOfOwner(tx, turn.threadId) : 0,
    lastSettledTurnOnBranch(tx, branchId),
  ]);
  if (limit > 0 && running >= limit) {
    // The caller's transaction rolls back: nothing was accepted or claimed.
    throw new ApiError(
      'rate_limited',
      refusalMessages.rate_limited.runningTurns(limit),
      { retryAfter: RUNNING_TURNS_RETRY_S },
      { 'retry-after': String(RUNNING_TURNS_RETRY_S) },
    );
  }
  return await transitionTurn(tx, turn, 'running', {
    branchId,
    handoff: lastSettled?.status === 'interrupted',
    runnerId: deps.runnerId,
    leaseExpiresAt: leaseFromNow(deps.leaseMs),
    startedAt: new Date(),
    finishedAt: null,
    userMessageId: crypto.randomUUID(),
    assistantMessageId: null,
    model: deps.modelName,
    partialText: '',
    error: null,
  });
}
