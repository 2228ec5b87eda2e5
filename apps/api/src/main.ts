import cluster from 'node:cluster';
import { leaveShutdownSignalsToCaller } from '@chat/db';
import { ConfigError, loadConfig } from './platform/config';
import { createLogger } from './platform/logger';
import { installProcessGuards } from './platform/processGuards';

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
  // This process stops its embedded PostgreSQL itself, last, after its turns are settled.
  leaveShutdownSignalsToCaller();
  // L2: one process per core sharing the port, or this process alone. The supervisor forks this
  // same entry point; its children take the second branch (cluster.isWorker).
  // Each branch loads only its own modules: the supervisor never loads the API's frameworks.
  if (config.API_PROCESSES > 1 && cluster.isPrimary)
    await (await import('./supervisor')).superviseApiProcesses(config, logger);
  else await (await import('./apiProcess')).serveApi(config, logger);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
