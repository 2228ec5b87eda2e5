import type { H3Event } from 'h3';
import type { DatabaseCircuit } from './databaseCircuit';

/**
 * Routes that answer without the circuit: liveness, and readiness, which asks the database itself
 * (so it says 200 as soon as the database is back, even before the circuit's next probe).
 */
const WITHOUT_DATABASE = new Set(['/api/health', '/api/ready']);

/** While the database cannot be reached, every other route answers `503 unavailable` at once. */
export function databaseGate(circuit: DatabaseCircuit) {
  return (event: H3Event) => {
    if (!WITHOUT_DATABASE.has(event.url.pathname)) circuit.assertClosed();
  };
}
