export {
  type EmbeddedOptions,
  type EmbeddedServer,
  freePort,
  leaveShutdownSignalsToCaller,
  startEmbeddedPostgres,
} from './server';
