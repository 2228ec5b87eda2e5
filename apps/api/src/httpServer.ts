import { serve } from 'h3';
import { createApp } from './app';
import { type NodeListener, sendDoor } from './platform/sendDoor';
import { turnStartRoutes } from './routes/route';
import type { ApiServices } from './routes/services';

/** Where and how the server listens: srvx's options, less the handler and the switches set here. */
export type ListenOptions = Omit<NonNullable<Parameters<typeof serve>[1]>, 'manual' | 'silent'>;

/**
 * The API's HTTP server: the app (`createApp`) behind the send door (`platform/sendDoor.ts`), which
 * answers a shed send in Node's request listener before the app sees it. Listening once ready. The
 * one way the API is served, by `pnpm start` (`apiProcess.ts`) and by the tests alike.
 */
export async function serveHttp(services: ApiServices, listen: ListenOptions) {
  const app = createApp(services);
  // Made without listening, so the door goes in front of srvx's listener before any request.
  const server = serve(app, { ...listen, silent: true, manual: true });
  const node = server.node;
  if (!node?.server || !node.handler) throw new Error('the HTTP server is not a Node server');
  const next = node.handler as NodeListener;
  node.server.removeAllListeners('request');
  node.server.on(
    'request',
    sendDoor({
      routes: turnStartRoutes(app),
      starts: services.http.starts,
      database: services.http.database,
      logger: services.logger,
      next,
    }),
  );
  await server.serve();
  await server.ready();
  return server;
}
