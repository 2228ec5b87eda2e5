import cluster, { type Worker } from 'node:cluster';
import { backoffDelay } from '@chat/contracts';
import { connect } from '@chat/db';
import type { Config } from './platform/config';
import type { Logger } from './platform/logger';
import { withinMs } from './platform/withinMs';
import { authSecret, beginShutdown, embeddedPostgresLog } from './processLifecycle';

/** A replacement for a process that died soon after it started waits longer each time, up to this. */
const MAX_RESTART_DELAY_MS = 30_000;
/** A process that lived this long before it died is replaced at once (no crash loop). */
const HEALTHY_AFTER_MS = 10_000;
/** Of the shutdown bound, what the embedded PostgreSQL gets to stop after the API processes ended. */
const DATABASE_STOP_MS = 3_000;

/**
 * L2: API_PROCESSES API processes sharing API_PORT (Node's cluster: this process holds the port's
 * socket, each child accepts from it and serves), each a full instance: every rule that spans instances already lives in
 * PostgreSQL (claims, leases, limits, LISTEN/NOTIFY), so nothing here coordinates requests.
 *
 * This process holds what must exist once: the embedded PostgreSQL (started, migrated and stopped
 * here; the children connect to it like to any DATABASE_URL) and the auth secret (generated here,
 * so two children starting together cannot write two). It replaces a child that dies, and on a
 * signal ends them all and then the database within the shutdown bound.
 */
export async function superviseApiProcesses(config: Config, logger: Logger): Promise<void> {
  const database = await connect({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    embeddedPort: config.EMBEDDED_PG_PORT,
    onLog: embeddedPostgresLog(logger),
  });
  // The schema is up to date now; the children open their own connections.
  await database.sql.end({ timeout: 5 });
  const childEnv = {
    DATABASE_URL: database.url,
    BETTER_AUTH_SECRET: authSecret(config),
    // libuv takes one waiting connection per wake-up, not all of them, so connections arriving
    // together are spread over the children instead of going to whichever woke first.
    UV_TCP_SINGLE_ACCEPT: '1',
  };

  // Each child accepts from the port's one socket itself. Round robin (cluster's default) has this
  // process accept and hand each connection to a child, one at a time per child, waiting for the
  // child's loop to take it: under a burst the children's loops are busy, so connections trickle
  // in one per turn of a busy loop (1,000 at once: answers after 2 to 3 s, while the loops had
  // time). Taken by the children, a loop that is free takes what waits, and a busy one leaves it
  // to the other.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  let stopping = false;
  let starting = true;
  let quickDeaths = 0;
  const startedAt = new WeakMap<Worker, number>();
  const listening = new WeakSet<Worker>();
  const start = () => {
    const worker = cluster.fork(childEnv);
    startedAt.set(worker, Date.now());
    worker.once('listening', () => listening.add(worker));
    return worker;
  };
  const children = Array.from({ length: config.API_PROCESSES }, start);

  const shutdown = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    const deadline = beginShutdown(logger, signal);
    const alive = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
    const ended = Promise.all(alive.map((worker) => exitOf(worker))).then(() => {});
    // One still starting has taken no request and holds no turn: it is not waited for.
    for (const worker of alive) worker.process.kill(listening.has(worker) ? 'SIGTERM' : 'SIGKILL');
    // Each child bounds its own shutdown too; one that has not ended when the database's turn
    // comes is killed (its turns are settled by the next start's sweeper, as after a crash).
    const ms = Math.max(0, deadline - DATABASE_STOP_MS - Date.now());
    if (!(await withinMs(ended, ms))) {
      logger.warn('an API process did not end in time; killing it');
      for (const worker of alive) if (!worker.isDead()) worker.process.kill('SIGKILL');
      await withinMs(ended, 500);
    }
    await withinMs(
      database
        .close()
        .catch((error: unknown) => logger.warn({ err: error }, 'the database did not stop cleanly')),
      Math.max(0, deadline - Date.now()),
    );
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => void shutdown(signal));

  cluster.on('exit', (worker, exitCode, exitSignal) => {
    if (stopping) return;
    if (starting) {
      // A process that cannot start (the port taken, the database refusing) fails the same way
      // again: say so and stop, rather than loop.
      logger.fatal({ exitCode, exitSignal }, 'an API process ended before it was listening; stopping');
      void shutdown('start failed', 1);
      return;
    }
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    quickDeaths = lived >= HEALTHY_AFTER_MS ? 0 : quickDeaths + 1;
    const delayMs = backoffDelay(quickDeaths, 1000, MAX_RESTART_DELAY_MS);
    logger.error({ exitCode, exitSignal, livedMs: lived, delayMs }, 'an API process ended; starting another');
    setTimeout(() => {
      if (!stopping) start();
    }, delayMs).unref();
  });

  const [port] = await Promise.all(children.map((worker) => listeningOf(worker)));
  starting = false;
  logger.info(
    {
      url: `http://${config.API_HOST}:${port}`,
      processes: config.API_PROCESSES,
      embeddedPostgres: database.embedded,
      models: config.models.map((model) => model.id),
    },
    'api listening',
  );
}

function exitOf(worker: Worker): Promise<void> {
  return worker.isDead() ? Promise.resolve() : new Promise((resolve) => worker.once('exit', () => resolve()));
}

/** The port once the child listens; never settles when it dies first (the exit handler deals with that). */
function listeningOf(worker: Worker): Promise<number> {
  return new Promise((resolve) => worker.once('listening', (address) => resolve(address.port)));
}
