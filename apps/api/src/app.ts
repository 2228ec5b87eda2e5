import { H3, type HTTPError } from 'h3';
import { registerAccountRoutes } from './accounts/routes';
import type { ChatServices } from './chats/context';
import { registerBranchRoutes } from './chats/routes/branches';
import { registerFeedbackRoutes } from './chats/routes/feedback';
import { registerShareRoutes } from './chats/routes/shares';
import { registerThreadRoutes } from './chats/routes/threads';
import { registerTurnRoutes } from './chats/routes/turns';
import { errorResponse, noSuchRoute } from './platform/errors';

/** The HTTP app: error mapping, auth mount and route registration, nothing else. */
export function createApp(services: ChatServices): H3 {
  const app = new H3({
    silent: true,
    onError: (error: HTTPError) => errorResponse(error, services.logger),
  });

  app.get('/api/health', () => ({ ok: true }));
  app.all('/api/auth/**', (event) => services.authRequests(event));
  registerAccountRoutes(app, services);
  registerThreadRoutes(app, services);
  registerTurnRoutes(app, services);
  registerBranchRoutes(app, services);
  registerShareRoutes(app, services);
  registerFeedbackRoutes(app, services);
  app.all('/**', () => {
    throw noSuchRoute();
  });
  return app;
}
