export {
  type EmbeddedOptions,
  type EmbeddedServer,
  freePort,
  leaveShutdownSignalsToCaller,
  socketDirFor,
  startEmbeddedPostgres,
  throughSocket,
} from './server';
