import { createDatabase, createSql, type Database, type Sql } from './client';
import type { HangWatch } from './hangWatch';

/**
 * How many connections of its own the priority pool keeps per process (`PriorityPool`): a Stop, a
 * thread read and the settle of the reply a Stop ends each take one, a read up to three (its
 * snapshot, the window's measure and the lineage repair run side by side).
 */
export const PRIORITY_CONNECTIONS = 3;

/**
 * A few connections of their own, opened when the process starts, for the work a person waits on
 * while a crowd of sends fills the main pool (ADR-059): a Stop, a thread read, and the settle of the
 * reply a Stop ended. On the main pool they queued behind every accept transaction of a burst (a
 * transaction holds its connection, ADR-033), up to 130 ms a statement; a connection opened then
 * costs about 100 ms more. The same client as the main pool (`createSql`): the same connect and
 * statement timeouts, the same back-off, and the same hang watch, so an outage or a hang fails them
 * as fast as everything else. Kept open (no lifetime): reopened only after they were cut.
 *
 * At most `size` works run here at once (a work: one step that needs the database, its caller
 * takes it for no longer); past that, work goes to the main pool, so a crowd of readers is never
 * held to these few connections, nor a Stop queued behind them.
 */
export class PriorityPool {
  private running = 0;
  private readonly own: { sql: Sql; db: Database } | undefined;

  /** `size` 0: no connections of its own, everything on `main`. */
  constructor(
    url: string,
    private readonly main: Database,
    private readonly size: number,
    watch?: HangWatch,
  ) {
    if (size > 0) {
      const sql = createSql(url, { max: size, keepOpen: true, ...(watch ? { watch } : {}) });
      this.own = { sql, db: createDatabase(sql) };
    }
  }

  /** Opens every connection now (one statement each), so none is opened in the middle of a burst. */
  async open(): Promise<void> {
    const { own } = this;
    if (!own) return;
    const held = await Promise.all(Array.from({ length: this.size }, () => own.sql.reserve()));
    for (const connection of held) connection.release();
  }

  /**
   * Runs `work` on the priority connections, or on the main pool when `size` works already run
   * here. `work` passes its `db` on to everything it does, so all of it runs on one side.
   */
  async run<T>(work: (db: Database) => Promise<T>): Promise<T> {
    if (!this.own || this.running >= this.size) return await work(this.main);
    this.running++;
    try {
      return await work(this.own.db);
    } finally {
      this.running--;
    }
  }

  async close(): Promise<void> {
    await this.own?.sql.end({ timeout: 5 });
  }
}
