import type { Account, AccountDeleted, AccountSession } from '@chat/contracts';
import type { Database, Queryable } from '@chat/db';
import type { Auth, SignedIn } from '../auth/auth';
import { signedInOf } from '../auth/auth';
import type { InterruptService } from '../chats/turns/interrupt/interruptService';
import { hasActiveTurn } from '../chats/turns/repository';
import type { Logger } from '../platform/logger';
import type { Signals } from '../platform/notifications';
import { describeDevice } from './device';
import {
  deleteUserRows,
  findUser,
  lockUser,
  memoryThreadIdsOf,
  moveUserRows,
  threadIdsOfUser,
} from './repository';

export interface AccountServiceDeps {
  db: Database;
  auth: () => Auth;
  interrupts: InterruptService;
  signals: Signals;
  logger: Logger;
  allowGuests: boolean;
}

/** A running turn that keeps coming back (a viewer claims the next) stops being waited for. */
const STOP_ATTEMPTS = 5;

/** Accounts: who is signed in, their sessions, a guest's chats moving to an account, deletion. */
export class AccountService {
  constructor(private readonly deps: AccountServiceDeps) {}

  get allowGuests(): boolean {
    return this.deps.allowGuests;
  }

  async signedIn(headers: Headers): Promise<SignedIn | null> {
    return await signedInOf(this.deps.auth(), headers, { allowGuests: this.deps.allowGuests });
  }

  async account(signedIn: SignedIn): Promise<Account> {
    const row = await findUser(this.deps.db, signedIn.userId);
    return {
      id: signedIn.userId,
      email: signedIn.isGuest ? null : (row?.email ?? null),
      isGuest: signedIn.isGuest,
      createdAt: (row?.createdAt ?? new Date()).toISOString(),
    };
  }

  async sessions(headers: Headers, signedIn: SignedIn): Promise<AccountSession[]> {
    const sessions = await this.deps.auth().api.listSessions({ headers });
    return sessions
      .map((session) => ({
        id: session.id,
        device: describeDevice(session.userAgent),
        createdAt: session.createdAt.toISOString(),
        lastSeenAt: session.updatedAt.toISOString(),
        current: session.id === signedIn.sessionId,
      }))
      .sort((a, b) => Number(b.current) - Number(a.current) || b.lastSeenAt.localeCompare(a.lastSeenAt));
  }

  /** Signs out every other device of this user; this one stays. */
  async revokeOtherSessions(headers: Headers): Promise<void> {
    await this.deps.auth().api.revokeOtherSessions({ headers });
  }

  /** The headers that end this request's session on the server and clear its cookie. */
  async signOutHeaders(headers: Headers): Promise<Headers> {
    const result = await this.deps.auth().api.signOut({ headers, returnHeaders: true });
    return result.headers;
  }

  /**
   * better-auth's anonymous plugin calls this when a guest signs up or signs in: every chat of the
   * guest (and all that hangs off it: turns, versions, Mastra memory) becomes the account's, in
   * one transaction, before the guest user is deleted. A second call finds nothing left to move.
   * A reply still streaming for the guest is stopped first (kept as interrupted), because the
   * model call saves its messages under the guest's memory resource.
   */
  async linkGuest(link: { guestId: string; userId: string }): Promise<void> {
    const { guestId, userId } = link;
    if (guestId === userId) return;
    const moved = await this.whenStopped(guestId, async (tx, threadIds) => {
      await moveUserRows(tx, guestId, userId);
      return threadIds;
    });
    for (const threadId of moved) await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    this.deps.logger.info({ threads: moved.length }, 'guest chats moved to an account');
  }

  /**
   * Deletes the user and every row of theirs in the app's tables and Mastra's, in one transaction.
   * Running replies are stopped first. Open tabs are told their threads are gone.
   */
  async deleteAccount(userId: string): Promise<AccountDeleted> {
    const deleted = await this.whenStopped(userId, async (tx, threadIds) => {
      const user = await lockUser(tx, userId);
      const memoryThreadIds = await memoryThreadIdsOf(tx, threadIds);
      await deleteUserRows(tx, { userId, email: user?.email ?? null, memoryThreadIds });
      return threadIds;
    });
    for (const threadId of deleted) await this.deps.signals.publish({ kind: 'thread.deleted', threadId });
    this.deps.logger.info({ threads: deleted.length }, 'account deleted');
    return { deleted: true, threads: deleted.length };
  }

  /**
   * Runs `work` in a transaction that holds the owner's thread rows, once none of them has a
   * running turn: turns are interrupted first, and again if a viewer claimed the next one meanwhile.
   */
  private async whenStopped<T>(
    ownerId: string,
    work: (tx: Queryable, threadIds: string[]) => Promise<T>,
  ): Promise<T> {
    const { db, interrupts } = this.deps;
    for (let attempt = 0; ; attempt += 1) {
      const threadIds = await threadIdsOfUser(db, ownerId);
      for (const threadId of threadIds) await interrupts.interrupt(ownerId, threadId).catch(() => null);
      const result = await db.transaction(async (tx) => {
        const locked = await threadIdsOfUser(tx, ownerId, { lock: true });
        if (attempt < STOP_ATTEMPTS) {
          for (const threadId of locked) if (await hasActiveTurn(tx, threadId)) return null;
        }
        return { value: await work(tx, locked) };
      });
      if (result) return result.value;
    }
  }
}
