import cluster from 'node:cluster';
import { serveHttp } from './httpServer';
import type { Config } from './platform/config';
import type { Logger } from './platform/logger';
import { beginShutdown } from './processLifecycle';
import { createRuntime } from './runtime';

/** The listen queue's length: a burst of connections at once waits in it instead of being dropped. */
const LISTEN_BACKLOG = 4096;

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
