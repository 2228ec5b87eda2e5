import cluster from 'node:cluster';
import { leaveShutdownSignalsToCaller } from '@chat/db';
import { serveApi } from './apiProcess';
import { ConfigError, loadConfig } from './platform/config';
import { createLogger } from './platform/logger';
import { installProcessGuards } from './platform/processGuards';
import { superviseApiProcesses } from './supervisor';

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
  if (config.API_PROCESSES > 1 && cluster.isPrimary) await superviseApiProcesses(config, logger);
  else await serveApi(config, logger);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
