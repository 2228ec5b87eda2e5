import type { Share, SharedMessage, SharedSnapshot } from '@chat/contracts';
import type { Database } from '@chat/db';
import { notFound } from '../platform/errors';
import { deleteOwnedShare, findShare, insertShare, listSharesOfThread } from './shares/repository';
import { isShareTokenShape, newShareToken, settledPart, toSharedMessages } from './shares/snapshot';
import type { ThreadService } from './threadService';
import { requireOwnedThread } from './threads/repository';

export interface ShareServiceDeps {
  db: Database;
  /** `AUTH_ALLOW_GUESTS`: when off, a guest's share links answer nothing (`findShare`). */
  allowGuests: boolean;
  threads: ThreadService;
  /** The origin people open the web app on; share links are made absolute with it. */
  webOrigin: string;
}

/**
 * Shared snapshots (H1). A share copies the settled part of the shown version as thread detail
 * shows it, through an allow-list (`shares/snapshot.ts`), into its own row: later messages, edits,
 * deletions never change it. Revoking deletes the row; deleting the thread deletes its shares
 * (cascade).
 */
export class ShareService {
  constructor(private readonly deps: ShareServiceDeps) {}

  async create(ownerId: string, threadId: string): Promise<Share> {
    const { thread, messages, turnQueue } = await this.deps.threads.detail(ownerId, threadId);
    const token = newShareToken();
    const snapshot = toSharedMessages(settledPart(messages, turnQueue), token);
    const row = await this.deps.db.transaction(async (tx) => {
      // Locked so a delete of the thread cannot slip in between (it would be a foreign-key error).
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      return await insertShare(tx, {
        token,
        threadId,
        ownerId,
        title: thread.title,
        messages: snapshot,
      });
    });
    return this.toShare(row);
  }

  async list(ownerId: string, threadId: string): Promise<Share[]> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    return (await listSharesOfThread(this.deps.db, threadId, ownerId)).map((row) => this.toShare(row));
  }

  /** What anyone with the link sees; no account needed. */
  async read(token: string): Promise<SharedSnapshot> {
    const row = isShareTokenShape(token)
      ? await findShare(this.deps.db, token, { guestOwners: this.deps.allowGuests })
      : undefined;
    if (!row) throw notFound('share');
    return {
      title: row.title,
      createdAt: row.createdAt.toISOString(),
      messages: row.messages as SharedMessage[],
    };
  }

  /** Owner only: anyone else's (or an unknown) token is simply not found. */
  async revoke(ownerId: string, token: string): Promise<void> {
    const deleted = isShareTokenShape(token) && (await deleteOwnedShare(this.deps.db, token, ownerId));
    if (!deleted) throw notFound('share');
  }

  private toShare(row: { token: string; createdAt: Date }): Share {
    return {
      token: row.token,
      url: new URL(`/share/${row.token}`, this.deps.webOrigin).href,
      createdAt: row.createdAt.toISOString(),
    };
  }
}
