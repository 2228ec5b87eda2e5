import type { Sql } from './client';

/** An arbitrary, fixed key: every instance of this app agrees on it. */
const STARTUP_LOCK_KEY = 727_274_001;

/**
 * Runs `work` while holding a session-wide Postgres advisory lock, so instances starting together
 * create schemas one at a time (concurrent CREATE ... IF NOT EXISTS can still collide in Postgres).
 * It polls with pg_try_advisory_lock instead of waiting in pg_advisory_lock: a waiting statement is
 * an open transaction, and Mastra's CREATE INDEX CONCURRENTLY in the holder would wait for it forever.
 */
export async function withStartupLock<T>(sql: Sql, work: () => Promise<T>): Promise<T> {
  const connection = await sql.reserve();
  try {
    for (;;) {
      const [row] = await connection<
        [{ locked: boolean }]
      >`select pg_try_advisory_lock(${STARTUP_LOCK_KEY}) as locked`;
      if (row?.locked) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return await work();
  } finally {
    await connection`select pg_advisory_unlock(${STARTUP_LOCK_KEY})`.catch(() => {});
    connection.release();
  }
}
