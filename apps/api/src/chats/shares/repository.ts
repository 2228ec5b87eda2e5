import type { SharedMessage } from '@chat/contracts';
import type { Queryable, ShareRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, desc, eq } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';

const { shares } = schema;

export async function insertShare(
  q: Queryable,
  values: { token: string; threadId: string; ownerId: string; title: string; messages: SharedMessage[] },
): Promise<ShareRow> {
  const [row] = await q.insert(shares).values(values).returning();
  if (!row) throw new InvariantError('insert returned no share');
  return row;
}

/** The owner's live shares of a thread, newest first. */
export async function listSharesOfThread(
  q: Queryable,
  threadId: string,
  ownerId: string,
): Promise<Array<Pick<ShareRow, 'token' | 'createdAt'>>> {
  return await q
    .select({ token: shares.token, createdAt: shares.createdAt })
    .from(shares)
    .where(and(eq(shares.threadId, threadId), eq(shares.ownerId, ownerId)))
    .orderBy(desc(shares.createdAt));
}

export async function findShare(q: Queryable, token: string): Promise<ShareRow | undefined> {
  const [row] = await q.select().from(shares).where(eq(shares.token, token));
  return row;
}

/** Deletes the owner's share; false when there is none (unknown, revoked or someone else's). */
export async function deleteOwnedShare(q: Queryable, token: string, ownerId: string): Promise<boolean> {
  const deleted = await q
    .delete(shares)
    .where(and(eq(shares.token, token), eq(shares.ownerId, ownerId)))
    .returning({ token: shares.token });
  return deleted.length > 0;
}
