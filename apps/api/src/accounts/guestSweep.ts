import type { Database } from '@chat/db';
import type { Logger } from '../platform/logger';
import type { AccountService } from './accountService';
import { idleGuestIds } from './repository';

/** Guests removed per round; the next round takes the rest. */
const BATCH = 50;

/**
 * With guests switched off (`AUTH_ALLOW_GUESTS=false`) a guest from before can no longer use its
 * chats, only keep them by signing up or in. Its data (chats, Mastra memory, share links,
 * uploads) is removed once it has not visited for `idleMs` (GUEST_GRACE_DAYS), like a deleted
 * account: every round removes the guests idle that long. A failure is logged and the next round
 * tries again: it never throws into the process.
 */
export function startGuestSweeper(
  deps: { accounts: AccountService; db: Database; logger: Logger },
  options: { idleMs: number; intervalMs: number },
): () => void {
  const sweep = async () => {
    try {
      const removed = await sweepIdleGuests(deps.accounts, deps.db, { idleMs: options.idleMs });
      if (removed > 0) deps.logger.info({ removed }, 'removed the data of guests idle past the grace period');
    } catch (error) {
      deps.logger.warn({ err: error }, 'idle guest sweep failed');
    }
  };
  const first = setTimeout(() => void sweep(), Math.min(options.intervalMs, 60_000));
  first.unref();
  const timer = setInterval(() => void sweep(), options.intervalMs);
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}

/** One round: removes guests whose last visit is more than `idleMs` ago; returns how many. */
export async function sweepIdleGuests(
  accounts: AccountService,
  db: Database,
  options: { idleMs: number },
): Promise<number> {
  const ids = await idleGuestIds(db, new Date(Date.now() - options.idleMs), BATCH);
  for (const id of ids) await accounts.deleteAccount(id);
  return ids.length;
}
