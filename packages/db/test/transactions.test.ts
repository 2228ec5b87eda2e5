import net from 'node:net';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { useFileDatabase } from './support/fileDatabase';

/**
 * The PostgreSQL client pipelines queries onto busy connections when the pool has none free. A
 * transaction's `BEGIN` sent that way must still hold its connection: `postgres` 3.4.9 lost the
 * hold when the `BEGIN` filled the connection's pipeline, and the transaction failed with
 * UNSAFE_TRANSACTION (a send under load answered `500`). Patched (patches/, ADR-033); a small
 * pipeline reaches that boundary at once.
 */
const database = useFileDatabase();

/** A pool of `max` connections, each taking at most two queries at a time. */
function pool(max: number) {
  // `max_pipeline` is an option of the client that its types leave out.
  const options = { max, max_pipeline: 2, onnotice: () => {} };
  return postgres(database.current().url, options);
}

const appName = (sql: postgres.Sql) =>
  sql`select current_setting('application_name') as name`.execute().then(([row]) => row?.name as string);

describe('a transaction on a busy pool', () => {
  it('begins and commits when its BEGIN is the query that fills a connection’s pipeline', async () => {
    const sql = pool(2);
    try {
      await Promise.all([sql`select 1`.execute(), sql`select 1`.execute()]);
      for (let round = 0; round < 5; round++) {
        // Both connections busy, one more query on each: the BEGIN is the second in a pipeline.
        const busy = [sql`select pg_sleep(0.05)`.execute(), sql`select pg_sleep(0.05)`.execute()];
        await new Promise((resolve) => setTimeout(resolve, 5));
        const queued = [appName(sql), appName(sql)];
        const committed = sql.begin(async (tx) => {
          await tx`set local application_name = 'inside'`;
          return (await tx`select 1 as one`)[0]?.one as number;
        });
        await expect(committed).resolves.toBe(1);
        await Promise.all([...busy, ...queued]);
      }
    } finally {
      await sql.end();
    }
  });

  it('runs no other query inside a transaction it is holding', async () => {
    const sql = pool(2);
    try {
      const seen: string[] = [];
      for (let round = 0; round < 5; round++) {
        const busy = [sql`select pg_sleep(0.05)`.execute(), sql`select pg_sleep(0.05)`.execute()];
        await new Promise((resolve) => setTimeout(resolve, 5));
        const transactions = Array.from({ length: 2 }, () =>
          sql
            .begin(async (tx) => {
              await tx`set local application_name = 'inside'`;
              await new Promise((resolve) => setTimeout(resolve, 30));
            })
            .catch(() => {}),
        );
        // Others, while those transactions begin and hold their connections.
        const others = Array.from({ length: 10 }, async (_, index) => {
          await new Promise((resolve) => setTimeout(resolve, index * 5));
          seen.push(await appName(sql));
        });
        await Promise.all([...busy, ...transactions, ...others]);
      }
      expect(seen.filter((name) => name === 'inside')).toEqual([]);
    } finally {
      await sql.end();
    }
  });
});

describe("a transaction's round trips", () => {
  it('sends its first statements with its BEGIN, not after its answer (ADR-057)', async () => {
    // Every write the client makes to its one connection, counted on the socket.
    let writes = 0;
    const url = new URL(database.current().url);
    // `socket` is an option of the client that its types leave out.
    const options = {
      max: 1,
      onnotice: () => {},
      socket: () => {
        const socket = url.searchParams.get('host')
          ? net.connect(`${url.searchParams.get('host')}/.s.PGSQL.${url.port || 5432}`)
          : net.connect(Number(url.port || 5432), url.hostname);
        const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
        socket.write = ((...args: unknown[]) => {
          writes++;
          return write(...args);
        }) as typeof socket.write;
        return socket;
      },
    };
    const sql = postgres(database.current().url, options);
    try {
      await sql`select 1`.execute();
      // The first round prepares the statements on the connection (their descriptions are asked for).
      for (const name of ['warm', 'first', 'second']) {
        writes = 0;
        const seen = await sql.begin(async (tx) => {
          await tx`select set_config('application_name', ${name}, true)`;
          return (await tx`select current_setting('application_name') as name`)[0]?.name as string;
        });
        const written = writes;
        // Set inside the transaction (local to it): both statements ran in it.
        expect(seen).toBe(name);
        expect(await appName(sql)).not.toBe(name);
        // BEGIN with the first statement, the second after its answer, COMMIT: three writes (four
        // when BEGIN's answer was waited for).
        if (name !== 'warm') expect(written).toBe(3);
      }
    } finally {
      await sql.end();
    }
  });
});
