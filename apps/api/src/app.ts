import { H3, type HTTPError } from 'h3';
import { registerAccountRoutes } from './accounts/routes';
import type { ChatServices } from './chats/context';
import { registerAttachmentRoutes } from './chats/routes/attachments';
import { registerBranchRoutes } from './chats/routes/branches';
import { registerFeedbackRoutes } from './chats/routes/feedback';
import { registerHitlRoutes } from './chats/routes/hitl';
import { registerShareRoutes } from './chats/routes/shares';
import { registerThreadRoutes } from './chats/routes/threads';
import { registerTurnRoutes } from './chats/routes/turns';
import { databaseGate } from './platform/databaseGate';
import { errorResponse, noSuchRoute } from './platform/errors';
import { requestGuard } from './platform/requestGuard';
import { applySecurityHeaders } from './platform/securityHeaders';

/** The HTTP app: the request guard, error mapping, auth mount and route registration, nothing else. */
export function createApp(services: ChatServices): H3 {
  const app = new H3({
    silent: true,
    onError: (error: HTTPError) => {
      const response = errorResponse(error, services.logger, services.http.database);
      applySecurityHeaders(response.headers);
      return response;
    },
  });

  app.use(requestGuard(services.http.trustedOrigins));
  app.use(databaseGate(services.http.database));
  app.get('/api/health', () => ({ ok: true }));
  app.get('/api/ready', async () => {
    await services.ready();
    return { ok: true };
  });
  app.all('/api/auth/**', (event) => services.authRequests(event));
  registerAccountRoutes(app, services);
  registerThreadRoutes(app, services);
  registerTurnRoutes(app, services);
  registerBranchRoutes(app, services);
  registerShareRoutes(app, services);
  registerFeedbackRoutes(app, services);
  registerHitlRoutes(app, services);
  registerAttachmentRoutes(app, services);
  app.all('/**', () => {
    throw noSuchRoute();
  });
  return app;
}
