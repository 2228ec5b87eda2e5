import { serve } from 'h3';
import { createApp } from './app';
import { ConfigError, loadConfig } from './platform/config';
import { createLogger } from './platform/logger';
import { installProcessGuards } from './platform/processGuards';
import { createRuntime } from './runtime';

process.env.MASTRA_TELEMETRY_DISABLED ??= '1';

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
      model: config.CHAT_MODEL,
      runner: runtime.runnerId,
    },
    'api listening',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await server.close(true);
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
