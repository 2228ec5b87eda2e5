import { backoffDelay } from '@chat/contracts';
import type { Database, ThreadRow } from '@chat/db';
import { ApiError } from '../../../platform/errors';
import type { Logger } from '../../../platform/logger';
import type { Signals } from '../../../platform/notifications';
import type { HeadClaims } from '../claim/headClaim';
import { lockDrainableThread, mayDrainThread } from './repository';

export interface BackgroundDrainDeps {
  db: Database;
  signals: Signals;
  logger: Logger;
  claims: HeadClaims;
}

export interface BackgroundDrainOptions {
  /** How often every chat is looked at, for work no signal named (lost, or from before a crash). */
  intervalMs: number;
}

/** The longest pause between looks while they keep failing (the database is down). */
const MAX_BACKOFF_MS = 15_000;
/** Claims one look makes at most; the next look goes on (a bound on one pass, not on the drain). */
const MAX_CLAIMS_PER_LOOK = 50;
/** How long a chat whose claim was refused is left alone, unless a signal about it comes first. */
const REFUSED_PAUSE_MS = 30_000;

/**
 * Q15: the server drains the queue of every chat whose choice is `background`, with no page open,
 * on any instance. It claims a chat's head when one of its turns settles (on whichever instance
 * settled it, crash recovery included), when its queue or its choice changes, and on a timer for
 * work nobody named. Every claim is the viewer's (`HeadClaims.claimUnattended`): the same rules,
 * the same transaction shape. Finding work is a `SKIP LOCKED` pick in PostgreSQL, so any number of
 * instances can look at once and only one claims a head.
 *
 * Bounded: each claim runs one queued turn, so a chat runs at most the items it holds; a failed head
 * or a pause stops it, like a viewer's claim. It never throws: a failed look is logged and the next
 * one waits longer (doubling up to 15 s); while the database is away it waits, then resumes.
 * Returns the stop function, which waits for a look in progress.
 */
export function startBackgroundDrain(
  deps: BackgroundDrainDeps,
  options: BackgroundDrainOptions,
): () => Promise<void> {
  const { logger } = deps;
  /** Chats a signal named since the last look (they may have work now). */
  const named = new Set<string>();
  /**
   * Chats whose claim was refused, until when they are left alone; `capped`: for the account's
   * running cap, which any settled turn may have freed.
   */
  const refused = new Map<string, { until: number; capped: boolean }>();
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  let looking: Promise<void> | undefined;
  let lookAgain = false;
  let sweepDue = true;

  /** Claims the head of a chat the pick locks, or of none; whether one was claimed. */
  const claimOne = async (threadId?: string): Promise<boolean> => {
    const now = Date.now();
    for (const [id, { until }] of refused) if (until <= now) refused.delete(id);
    const pick: { thread?: ThreadRow } = {};
    try {
      const claimed = await deps.claims.claimUnattended(async (tx) => {
        pick.thread = await lockDrainableThread(tx, { threadId, skip: [...refused.keys()] });
        return pick.thread;
      });
      if (claimed)
        logger.info({ threadId: claimed.turn.threadId, turnId: claimed.turn.id }, 'drained a queue head');
      return claimed !== null;
    } catch (error) {
      // A refusal by the rules (the running cap, a race the pick could not see): that chat waits.
      const picked = pick.thread;
      if (!(error instanceof ApiError) || !picked) throw error;
      const retryAfterS = Number(error.details?.retryAfter);
      const pauseMs =
        Number.isFinite(retryAfterS) && retryAfterS > 0 ? retryAfterS * 1_000 : REFUSED_PAUSE_MS;
      refused.set(picked.id, { until: Date.now() + pauseMs, capped: error.code === 'rate_limited' });
      logger.debug({ threadId: picked.id, code: error.code }, 'drain claim refused');
      return true;
    }
  };

  const look = async () => {
    const threads = [...named];
    named.clear();
    for (const threadId of threads) {
      // Most named chats have nothing to drain: one unlocked read says so (see mayDrainThread).
      if (await mayDrainThread(deps.db, threadId)) await claimOne(threadId);
    }
    if (!sweepDue) return;
    sweepDue = false;
    for (let claims = 0; claims < MAX_CLAIMS_PER_LOOK && !stopped; claims += 1) {
      if (!(await claimOne())) return;
    }
    // More work than one look takes: the next look comes at once.
    sweepDue = true;
    lookAgain = true;
  };

  const run = () => {
    if (stopped) return;
    if (looking) {
      lookAgain = true;
      return;
    }
    clearTimeout(timer);
    looking = look()
      .then(() => {
        if (failures > 0) logger.info({ failures }, 'the background drain works again');
        failures = 0;
      })
      .catch((error: unknown) => {
        failures += 1;
        // Nothing is lost: the chats are found again by the next look.
        sweepDue = true;
        if (failures === 1) logger.warn({ err: error }, 'background drain failed; backing off');
      })
      .finally(() => {
        looking = undefined;
        if (stopped) return;
        if (lookAgain && failures === 0) {
          lookAgain = false;
          run();
          return;
        }
        const delay =
          failures === 0
            ? options.intervalMs
            : backoffDelay(failures, 2 * options.intervalMs, Math.max(options.intervalMs, MAX_BACKOFF_MS));
        timer = setTimeout(() => {
          sweepDue = true;
          run();
        }, delay);
        timer.unref();
      });
  };

  const unsubscribe = deps.signals.subscribe((signal) => {
    // A turn settled (the slot is free), the queue changed (a send, a resume, an edited failed
    // head), or the chat's choice changed: that chat may run now.
    if (
      signal.kind === 'turn.settled' ||
      signal.kind === 'queue.changed' ||
      signal.kind === 'thread.changed'
    ) {
      refused.delete(signal.threadId);
      // A settle says whether its chat drains in the background (read under its lock); one that a
      // viewer drains has nothing for the drain, and needs no read to say so.
      const forTheDrain = signal.kind !== 'turn.settled' || signal.background !== false;
      if (forTheDrain) named.add(signal.threadId);
      // A reply ended somewhere: an account that was at its running cap may be under it now.
      if (signal.kind === 'turn.settled') {
        for (const [id, { capped }] of refused) {
          if (!capped) continue;
          refused.delete(id);
          named.add(id);
        }
      }
      // While looks fail, the timer's backoff decides; the chat is found by the next sweep anyway.
      if (failures === 0 && named.size > 0) run();
    }
  });
  run();

  return async () => {
    stopped = true;
    unsubscribe();
    clearTimeout(timer);
    await looking;
  };
}
