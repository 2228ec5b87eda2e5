import type { SharedMessage } from '@chat/contracts';
import type { Queryable, ShareRow } from '@chat/db';
import { schema } from '@chat/db';
import { and, desc, eq, sql } from 'drizzle-orm';
import { InvariantError } from '../../platform/errors';

const { shares, user } = schema;

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

/**
 * The share of `token` while it answers. With guests switched off (`guestOwners: false`) a guest's
 * shares answer nothing, from the moment the switch is made: the guest can no longer sign in to
 * revoke them, and its data stays until the grace period ends (`accounts/guestSweep.ts`).
 */
export async function findShare(
  q: Queryable,
  token: string,
  options: { guestOwners: boolean },
): Promise<ShareRow | undefined> {
  const [row] = await q
    .select({ share: shares })
    .from(shares)
    .where(
      and(
        eq(shares.token, token),
        options.guestOwners
          ? undefined
          : sql`not exists (select 1 from ${user} where ${user.id} = ${shares.ownerId} and ${user.isAnonymous})`,
      ),
    );
  return row?.share;
}

/** Deletes the owner's share; false when there is none (unknown, revoked or someone else's). */
export async function deleteOwnedShare(q: Queryable, token: string, ownerId: string): Promise<boolean> {
  const deleted = await q
    .delete(shares)
    .where(and(eq(shares.token, token), eq(shares.ownerId, ownerId)))
    .returning({ token: shares.token });
  return deleted.length > 0;
}
