import type { Sql } from '@chat/db';
import type { DatabaseCircuit } from './databaseCircuit';
import { databaseUnavailable } from './errors';

/** How long the readiness probe waits for the database. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * `GET /api/ready`: resolves when the database answers a query, else `503 unavailable`. An answer
 * closes the circuit too: ready means the next request is served, not refused until a probe.
 */
export function databaseReadiness(sql: Sql, circuit: DatabaseCircuit): () => Promise<void> {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(databaseUnavailable()), PROBE_TIMEOUT_MS);
    });
    try {
      await Promise.race([sql`select 1`, timeout]);
    } catch {
      throw databaseUnavailable();
    } finally {
      clearTimeout(timer);
    }
    circuit.recordAnswer();
  };
}
