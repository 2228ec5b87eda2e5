import type { HitlRequest, HitlStatus } from '@chat/contracts';
import type { HitlRequestRow, Queryable } from '@chat/db';
import { schema } from '@chat/db';
import { and, asc, eq } from 'drizzle-orm';
import { InvariantError } from '../../../platform/errors';

/** SQL of tool approvals (H3): the API's own record of each request and its decision (O2). */

const requests = schema.hitlRequests;

export async function insertPendingRequest(
  q: Queryable,
  values: {
    id: string;
    threadId: string;
    turnId: string;
    toolName: string;
    toolCallId: string;
    runId: string;
    args: unknown;
  },
): Promise<HitlRequestRow> {
  const [row] = await q
    .insert(requests)
    .values({ ...values, args: values.args ?? {}, status: 'pending' })
    .returning();
  if (!row) throw new InvariantError('insert returned no approval request');
  return row;
}

export async function findRequest(
  q: Queryable,
  threadId: string,
  requestId: string,
): Promise<HitlRequestRow | undefined> {
  const [row] = await q
    .select()
    .from(requests)
    .where(and(eq(requests.threadId, threadId), eq(requests.id, requestId)));
  return row;
}

/** The request a waiting turn waits for. */
export async function findPendingRequestOfTurn(
  q: Queryable,
  turnId: string,
): Promise<HitlRequestRow | undefined> {
  const [row] = await q
    .select()
    .from(requests)
    .where(and(eq(requests.turnId, turnId), eq(requests.status, 'pending')));
  return row;
}

/** Ends a pending request; conditional on it still being pending, so a decision is made once. */
export async function decideRequest(
  q: Queryable,
  requestId: string,
  status: Exclude<HitlStatus, 'pending'>,
): Promise<HitlRequestRow | undefined> {
  const [row] = await q
    .update(requests)
    .set({ status, decidedAt: new Date() })
    .where(and(eq(requests.id, requestId), eq(requests.status, 'pending')))
    .returning();
  return row;
}

/** Every approval of the thread, oldest first, as the contract shows it. */
export async function listRequests(q: Queryable, threadId: string): Promise<HitlRequest[]> {
  const rows = await q
    .select()
    .from(requests)
    .where(eq(requests.threadId, threadId))
    .orderBy(asc(requests.createdAt), asc(requests.id));
  return rows.map(toHitlRequest);
}

export function toHitlRequest(row: HitlRequestRow): HitlRequest {
  return {
    id: row.id,
    turnId: row.turnId,
    toolName: row.toolName,
    toolCallId: row.toolCallId,
    args: row.args,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    decidedAt: row.decidedAt?.toISOString() ?? null,
  };
}

/** The thread's pending approvals (at most one blocks the queue; a few at most in any case). */
export async function listPendingRequests(q: Queryable, threadId: string): Promise<HitlRequest[]> {
  const rows = await q
    .select()
    .from(requests)
    .where(and(eq(requests.threadId, threadId), eq(requests.status, 'pending')))
    .orderBy(asc(requests.createdAt), asc(requests.id));
  return rows.map(toHitlRequest);
}
