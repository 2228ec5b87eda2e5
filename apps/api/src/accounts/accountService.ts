import type { Account, AccountDeleted, AccountSession, ServerSettings } from '@chat/contracts';
import type { Database, Queryable } from '@chat/db';
import type { Auth } from '../auth/auth';
import { signedInOf } from '../auth/auth';
import type { SessionCache } from '../auth/sessionCache';
import type { SignedIn } from '../auth/signedIn';
import { transcriptTables } from '../chats/transcript/tables';
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
  runningTurnIdsOf,
  stillRunning,
  threadIdsOfUser,
} from './repository';

export interface AccountServiceDeps {
  db: Database;
  auth: () => Auth;
  interrupts: InterruptService;
  signals: Signals;
  logger: Logger;
  allowGuests: boolean;
  allowSignUp: boolean;
  /** Sessions looked up a moment ago (`auth/sessionCache.ts`); told when sessions end. */
  sessions: SessionCache;
}

/** A running turn that keeps coming back (a viewer claims the next) stops being waited for. */
const STOP_ATTEMPTS = 5;
/** How often a move waiting for replies to settle checks them when no settle signal came. */
const SETTLE_RECHECK_MS = 1_000;

/** Accounts: who is signed in, their sessions, a guest's chats moving to an account, deletion. */
export class AccountService {
  constructor(private readonly deps: AccountServiceDeps) {}

  get allowGuests(): boolean {
    return this.deps.allowGuests;
  }

  /** What a visitor may do before signing in (`GET /api/server-settings`). */
  serverSettings(): ServerSettings {
    return { guestsAllowed: this.deps.allowGuests, signUpAllowed: this.deps.allowSignUp };
  }

  async signedIn(headers: Headers): Promise<SignedIn | null> {
    return await signedInOf(this.deps.auth(), headers, {
      allowGuests: this.deps.allowGuests,
      cache: this.deps.sessions,
    });
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
  async revokeOtherSessions(headers: Headers, signedIn: SignedIn): Promise<void> {
    await this.deps.auth().api.revokeOtherSessions({ headers });
    await this.deps.sessions.ended(signedIn.userId);
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
   * A reply streaming at that moment goes on: the person keeps reading it under the account.
   * Its model call started under the guest's memory resource and saves its messages there, so
   * once it has settled those rows move too (`moveMemoryOnceSettled`).
   */
  async linkGuest(link: { guestId: string; userId: string }): Promise<void> {
    const { guestId, userId } = link;
    if (guestId === userId) return;
    // The thread rows are locked first: no claim starts a turn between the read and the move.
    const { moved, running } = await this.deps.db.transaction(async (tx) => {
      const threadIds = await threadIdsOfUser(tx, guestId, { lock: true });
      const runningTurnIds = await runningTurnIdsOf(tx, threadIds);
      await moveUserRows(tx, guestId, userId);
      return { moved: threadIds, running: runningTurnIds };
    });
    for (const threadId of moved) await this.deps.signals.publish({ kind: 'thread.changed', threadId });
    // better-auth deletes the guest user (and its session) once this returns.
    await this.deps.sessions.ended(guestId);
    this.deps.logger.info(
      { threads: moved.length, running: running.length },
      'guest chats moved to an account',
    );
    if (running.length > 0) void this.moveMemoryOnceSettled(running, guestId, userId);
  }

  /**
   * Waits (in the background) until the replies that ran during a move have settled, wherever they
   * run (their `turn.settled` signal, or a re-read now and then), then moves what their model calls
   * saved under the guest's memory resource. A failure is logged; it never reaches a request or the
   * process. If this process stops first, those rows keep the guest's id (see the known limits).
   */
  private async moveMemoryOnceSettled(turnIds: string[], guestId: string, userId: string): Promise<void> {
    const { db, signals, logger } = this.deps;
    let wake = () => {};
    const unsubscribe = signals.subscribe((signal) => {
      if (signal.kind === 'turn.settled' && turnIds.includes(signal.turnId)) wake();
    });
    try {
      while ((await stillRunning(db, turnIds)).length > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, SETTLE_RECHECK_MS);
          timer.unref();
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      await db.transaction((tx) => transcriptTables.moveRowsOfUser(tx, guestId, userId));
      logger.info(
        { turns: turnIds.length },
        'memory of replies that ran during a sign-up moved to the account',
      );
    } catch (error) {
      logger.error({ err: error }, 'moving the memory of replies that ran during a sign-up failed');
    } finally {
      unsubscribe();
    }
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
    await this.deps.sessions.ended(userId);
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
