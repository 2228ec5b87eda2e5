import { availableParallelism, loadavg } from 'node:os';
import { type ApiProcess, startApiProcess } from '../apiProcess';
import { waitFor } from '../client';
import { KILL_BOUND_MS } from './losses';
import { OwnedPostgres } from './ownedPostgres';

/**
 * The faults the suite injects: a database outage of some seconds, or a hard kill of the API; and
 * none at all, the control that shows the invariant holds when nothing fails.
 */
export type FaultKind = 'none' | 'outage-5s' | 'outage-30s' | 'outage-60s' | 'kill';
export const FAULT_KINDS: readonly FaultKind[] = ['none', 'outage-5s', 'outage-30s', 'outage-60s', 'kill'];

/** A fault as it happened, in the test process's clock. */
export type Fault =
  | { kind: 'none'; at: number }
  /** `boundMs`: how far back from the kill the stored text must reach (see `killBoundNow`). */
  | { kind: 'kill'; at: number; boundMs: number }
  | { kind: 'outage'; from: number; to: number };

/**
 * The kill bound the suite holds a kill to, at this moment: `KILL_BOUND_MS` on a machine with a
 * core to spare, stretched by how far the run queue is past the cores. The bound itself is one
 * checkpoint commit in flight; on two cores at a load of 20 one commit took more than 200 ms (two
 * kill cases of a full run were short by a word or two), while the order of the writes, which is
 * what loses text, does not change with load (`checkpoint.test.ts` pins it with every timer
 * stopped).
 */
function killBoundNow(): number {
  return Math.round(KILL_BOUND_MS * Math.max(1, (loadavg()[0] ?? 0) / availableParallelism()));
}

/**
 * The lease the API under test runs with: short, so a killed API's turns are settled within
 * seconds, and an outage outlives many leases (its sweeper and heartbeats meet it again and again).
 */
const LEASE_MS = '1500';

/**
 * How long the API under test waits on a run that sends nothing before it stops it as failed:
 * well above the longest pause of the suite's replies (a tool step of 1.5 s), well below the time
 * a case waits for its threads to come to rest.
 */
const IDLE_MS = '20000';

/**
 * An API process (`src/main.ts`) on a PostgreSQL server of its own: the fault suite stops and
 * starts the server under it (an outage) or kills it with SIGKILL and starts a new one on the same
 * database (a crash).
 */
export class FaultLab {
  private constructor(
    readonly postgres: OwnedPostgres,
    private current: ApiProcess,
  ) {}

  static async open(): Promise<FaultLab> {
    const postgres = await OwnedPostgres.start();
    const api = await startApiProcess(apiEnv(postgres));
    return new FaultLab(postgres, api);
  }

  /** Where the API answers now (a new address after a kill). */
  get baseUrl(): string {
    return this.current.baseUrl;
  }

  /**
   * Injects `kind` now and returns once the system is back: the database answers again, or a new
   * API process is up. `during` runs while the database is down (sends that must fail or be kept).
   */
  async inject(kind: FaultKind, during: () => void = () => {}): Promise<Fault> {
    if (kind === 'none') return { kind, at: Date.now() };
    if (kind === 'kill') {
      const at = Date.now();
      const boundMs = killBoundNow();
      await this.current.kill();
      this.current = await startApiProcess(apiEnv(this.postgres));
      return { kind, at, boundMs };
    }
    const seconds = Number(/^outage-(\d+)s$/.exec(kind)?.[1]);
    const from = Date.now();
    await this.postgres.stop();
    during();
    await sleepUntil(from + seconds * 1000);
    const to = Date.now();
    await this.postgres.resume();
    await this.serving();
    return { kind: 'outage', from, to };
  }

  /**
   * Resolves once the API serves requests again: `/api/ready` asks the database itself, and a
   * route behind the API's database circuit (the thread list, refused without a session) no longer
   * answers `503` (the circuit closes at its next probe).
   */
  async serving(): Promise<void> {
    const status = async (path: string) =>
      (await fetch(`${this.baseUrl}${path}`).catch(() => undefined))?.status;
    await waitFor(
      () => status('/api/ready'),
      (answer) => answer === 200,
      60_000,
    );
    await waitFor(
      () => status('/api/threads'),
      (answer) => answer !== undefined && answer !== 503,
      60_000,
    );
  }

  async close(): Promise<void> {
    await this.current.stop().catch(() => {});
    await this.postgres.dispose();
  }
}

function apiEnv(postgres: OwnedPostgres): Record<string, string> {
  return {
    DATABASE_URL: postgres.databaseUrl,
    TURN_LEASE_MS: LEASE_MS,
    TURN_IDLE_MS: IDLE_MS,
    // The suite's own output stays readable; API_TEST_LOG=info (or debug) shows everything.
    LOG_LEVEL: process.env.API_TEST_LOG ?? 'error',
  };
}

export async function sleepUntil(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
