import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createDatabase, createSql, type Database } from '../src/client';
import { PriorityPool } from '../src/priorityPool';
import { useFileDatabase } from './support/fileDatabase';

/**
 * ADR-059: the priority pool's connections are open before the first request, and a crowd of work
 * on it is not held to them: past its size, work runs on the main pool.
 */
const database = useFileDatabase();

const backendOf = async (db: Database) =>
  ((await db.execute(sql`select pg_backend_pid() as pid`)) as unknown as Array<{ pid: number }>)[0]?.pid;

describe('the priority pool', () => {
  it('opens its connections at once, runs work on them, and past its size on the main pool', async () => {
    const mainSql = createSql(database.current().url, { max: 2 });
    const main = createDatabase(mainSql);
    const pool = new PriorityPool(database.current().url, main, 2);
    try {
      const count = async () =>
        Number(
          (
            (await main.execute(
              sql`select count(*) as n from pg_stat_activity where datname = current_database()`,
            )) as unknown as Array<{ n: string }>
          )[0]?.n,
        );
      const before = await count();
      await pool.open();
      expect(await count()).toBe(before + 2);

      const mainPid = await backendOf(main);
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      // Two works hold the pool's two connections, each in a transaction.
      const pids: number[] = [];
      const holding = [0, 1].map(() =>
        pool.run((db) =>
          db.transaction(async (tx) => {
            pids.push((await backendOf(tx as unknown as Database)) as number);
            await released;
          }),
        ),
      );
      while (pids.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(new Set(pids).size).toBe(2);
      expect(pids).not.toContain(mainPid);
      // A third goes to the main pool, at once, not behind them.
      const third = await pool.run(async (db) => {
        expect(db).toBe(main);
        return await backendOf(db);
      });
      expect(pids).not.toContain(third);
      release();
      await Promise.all(holding);
      // Free again: back on its own connections.
      expect(pids).toContain(await pool.run((db) => backendOf(db)));
    } finally {
      await pool.close();
      await mainSql.end({ timeout: 5 });
    }
  });

  it('with size 0 has no connections of its own', async () => {
    const mainSql = createSql(database.current().url, { max: 1 });
    const main = createDatabase(mainSql);
    const pool = new PriorityPool(database.current().url, main, 0);
    try {
      await pool.open();
      expect(await pool.run(async (db) => db)).toBe(main);
    } finally {
      await pool.close();
      await mainSql.end({ timeout: 5 });
    }
  });
});
