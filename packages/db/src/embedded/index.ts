export { type EmbeddedOptions, type EmbeddedServer, freePort, startEmbeddedPostgres } from './server';
