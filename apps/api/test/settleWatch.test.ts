import { createSql } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettleWatch } from '../src/chats/turns/interrupt/settleWatch';
import { createLogger } from '../src/platform/logger';
import { type Signal, Signals } from '../src/platform/notifications';
import { freshDatabase } from './support/testApi';

/**
 * A Stop waits for `turn.settled` through a SettleWatch, over PostgreSQL's LISTEN/NOTIFY. A settle
 * heard while the turn row was being read (the read's answer may be from before it) must end the
 * wait that follows at once: lost, the Stop waited a whole recheck (250 ms) for nothing.
 */
let database: TestDatabase;
let sql: ReturnType<typeof createSql>;
let signals: Signals;

beforeAll(async () => {
  database = await freshDatabase();
  sql = createSql(database.url, { max: 2 });
  signals = new Signals(sql, () => createSql(database.url, { max: 1 }), createLogger('silent'));
  await signals.start();
});

afterAll(async () => {
  await signals?.stop();
  await sql?.end();
  await database?.drop();
});

/** Publishes `signal` and resolves once this process's listener heard it. */
async function publishAndHear(signal: Signal): Promise<void> {
  const heard = new Promise<void>((resolve) => {
    const unsubscribe = signals.subscribe((received) => {
      if (JSON.stringify(received) !== JSON.stringify(signal)) return;
      unsubscribe();
      resolve();
    });
  });
  await signals.publish(signal);
  await heard;
}

const timed = async (work: Promise<void>) => {
  const at = performance.now();
  await work;
  return performance.now() - at;
};

describe('a Stop waiting for its turn to settle (SettleWatch)', () => {
  it('keeps a settle heard before the wait, so the wait ends at once; reset forgets it', async () => {
    const threadId = crypto.randomUUID();
    const watch = new SettleWatch(signals, threadId);
    try {
      // Heard "during the read": before anything waits.
      await publishAndHear({ kind: 'turn.settled', threadId, turnId: crypto.randomUUID() });
      expect(await timed(watch.wait(60_000))).toBeLessThan(1_000);
      // A read follows the reset and sees the settle: the next wait is a real one.
      watch.reset();
      expect(await timed(watch.wait(300))).toBeGreaterThanOrEqual(290);
    } finally {
      watch.close();
    }
  });

  it('wakes a wait when a settle of its thread arrives, not one of another thread', async () => {
    const threadId = crypto.randomUUID();
    const watch = new SettleWatch(signals, threadId);
    try {
      let woke = false;
      const waiting = watch.wait(60_000).then(() => {
        woke = true;
      });
      await publishAndHear({
        kind: 'turn.settled',
        threadId: crypto.randomUUID(),
        turnId: crypto.randomUUID(),
      });
      await publishAndHear({ kind: 'turn.started', threadId, turnId: crypto.randomUUID() });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(woke).toBe(false);
      await publishAndHear({ kind: 'turn.settled', threadId, turnId: crypto.randomUUID() });
      await waiting;
      expect(woke).toBe(true);
    } finally {
      watch.close();
    }
  });
});
