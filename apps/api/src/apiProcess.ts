import cluster from 'node:cluster';
import { serveHttp } from './httpServer';
import type { Config } from './platform/config';
import type { Logger } from './platform/logger';
import { createRuntime } from './runtime';

/**
 * A shutdown ends within this, whatever state the database connections are in: past it, what is
 * left is abandoned and the process exits (a reply cut off is settled as interrupted by the next
 * instance's sweeper once its lease runs out).
 */
export const SHUTDOWN_BOUND_MS = 10_000;

/** The listen queue's length: a burst of connections at once waits in it instead of being dropped. */
const LISTEN_BACKLOG = 4096;

/**
 * Says the process is shutting down and holds it to the bound: past SHUTDOWN_BOUND_MS it exits,
 * whatever is left. Returns the deadline (epoch ms) for the steps to share.
 */
export function beginShutdown(logger: Logger, signal: string): number {
  logger.info({ signal }, 'shutting down');
  setTimeout(() => {
    logger.error({ boundMs: SHUTDOWN_BOUND_MS }, 'shutdown did not finish in time; exiting now');
    process.exit(1);
  }, SHUTDOWN_BOUND_MS).unref();
  return Date.now() + SHUTDOWN_BOUND_MS;
}

/**
 * One API process: the runtime and its HTTP server on API_PORT, until a signal ends it. Under the
 * supervisor (`supervisor.ts`) it is one of several sharing the port, and it also ends when the
 * supervisor is gone (killed hard: nothing would hand it connections any more).
 */
export async function serveApi(config: Config, logger: Logger): Promise<void> {
  const runtime = await createRuntime(config, logger);
  const server = await serveHttp(runtime.services, {
    port: config.API_PORT,
    hostname: config.API_HOST,
    node: {
      // Connections that arrive together wait in the kernel's queue until the loop takes them; past
      // Node's default of 511 the kernel drops them and a client tries again only a second later
      // (then 3 s). The kernel caps it at its own limit (`net.core.somaxconn`).
      backlog: LISTEN_BACKLOG,
      // Under the supervisor: take the port's one socket from it (cluster's shared handle) instead
      // of binding our own, which srvx asks for by default and which a second process cannot have.
      ...(cluster.isWorker ? { exclusive: false } : {}),
    },
  });
  logger.info(
    {
      url: server.url,
      embeddedPostgres: runtime.database.embedded,
      models: config.models.map((model) => model.id),
      runner: runtime.runnerId,
    },
    'api listening',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const deadline = beginShutdown(logger, signal);
    await server.close(true);
    await runtime.close(deadline);
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => void shutdown(signal));
  if (cluster.isWorker) process.on('disconnect', () => void shutdown('supervisor gone'));
}
