import { leaveShutdownSignalsToCaller } from '@chat/db';
import { serve } from 'h3';
import { createApp } from './app';
import { ConfigError, loadConfig } from './platform/config';
import { createLogger } from './platform/logger';
import { installProcessGuards } from './platform/processGuards';
import { createRuntime } from './runtime';

process.env.MASTRA_TELEMETRY_DISABLED ??= '1';

/**
 * A shutdown ends within this, whatever state the database connections are in: past it, what is
 * left is abandoned and the process exits (a reply cut off is settled as interrupted by the next
 * instance's sweeper once its lease runs out).
 */
const SHUTDOWN_BOUND_MS = 10_000;

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.LOG_LEVEL);
  installProcessGuards(logger);
  // This process stops its embedded PostgreSQL itself, last, after its turns are settled.
  leaveShutdownSignalsToCaller();
  const runtime = await createRuntime(config, logger);
  const server = serve(createApp(runtime.services), {
    port: config.API_PORT,
    hostname: config.API_HOST,
    silent: true,
  });
  await server.ready();
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
    logger.info({ signal }, 'shutting down');
    const deadline = Date.now() + SHUTDOWN_BOUND_MS;
    setTimeout(() => {
      logger.error({ boundMs: SHUTDOWN_BOUND_MS }, 'shutdown did not finish in time; exiting now');
      process.exit(1);
    }, SHUTDOWN_BOUND_MS).unref();
    await server.close(true);
    await runtime.close(deadline);
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => void shutdown(signal));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
