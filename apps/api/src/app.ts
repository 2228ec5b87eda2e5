import { H3, type HTTPError } from 'h3';
import { logRequest } from './platform/accessLog';
import { databaseGate } from './platform/databaseGate';
import { errorResponse, noSuchRoute } from './platform/errors';
import { requestGuard } from './platform/requestGuard';
import { applySecurityHeaders } from './platform/securityHeaders';
import { registerAccountRoutes } from './routes/account';
import { registerApprovalRoutes } from './routes/approvals';
import { registerAttachmentRoutes } from './routes/attachments';
import { registerBranchRoutes } from './routes/branches';
import { registerFeedbackRoutes } from './routes/feedback';
import { registerPortabilityRoutes } from './routes/portability';
import type { ApiServices } from './routes/services';
import { registerSettingsRoutes } from './routes/settings';
import { registerShareRoutes } from './routes/shares';
import { registerThreadRoutes } from './routes/threads';
import { registerTurnRoutes } from './routes/turns';

/**
 * The HTTP app: the request guard, error mapping, the access log, auth mount and route
 * registration, nothing else.
 */
export function createApp(services: ApiServices): H3 {
  const app = new H3({
    silent: true,
    onError: (error: HTTPError, event) => {
      const response = errorResponse(error, services.logger, services.http.database, {
        clientGone: event?.req.signal?.aborted === true,
      });
      applySecurityHeaders(response.headers);
      return response;
    },
    onResponse: (response, event) => logRequest(services.logger, event, response),
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
  registerApprovalRoutes(app, services);
  registerAttachmentRoutes(app, services);
  registerPortabilityRoutes(app, services);
  registerSettingsRoutes(app, services);
  app.all('/**', () => {
    throw noSuchRoute();
  });
  return app;
}
