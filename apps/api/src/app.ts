import { H3, type HTTPError } from 'h3';
import type { ChatServices } from './chats/context';
import { registerBranchRoutes } from './chats/routes/branches';
import { registerThreadRoutes } from './chats/routes/threads';
import { registerTurnRoutes } from './chats/routes/turns';
import { ApiError, apiErrorResponse, errorResponse } from './platform/errors';

/** The HTTP app: error mapping, auth mount and route registration, nothing else. */
export function createApp(services: ChatServices): H3 {
  const app = new H3({
    silent: true,
    onError: (error: HTTPError) => toErrorResponse(error, services),
  });

  app.get('/api/health', () => ({ ok: true }));
  app.all('/api/auth/**', (event) => services.auth.handler(event.req));
  registerThreadRoutes(app, services);
  registerTurnRoutes(app, services);
  registerBranchRoutes(app, services);
  app.all('/**', () => errorResponse('not_found', 'No such route.', 404));
  return app;
}

/** The one place errors become responses: refusals keep their code; anything else is a 500. */
function toErrorResponse(error: HTTPError, services: ChatServices): Response {
  const cause = error.cause ?? error;
  if (cause instanceof ApiError) return apiErrorResponse(cause);
  if (error.status === 404) return errorResponse('not_found', 'No such route.', 404);
  if (error.status === 405) return errorResponse('not_found', 'No such route.', 404);
  if (error.status >= 400 && error.status < 500) return errorResponse('bad_request', error.message, 400);
  services.logger.error({ err: cause }, 'unhandled error');
  return errorResponse('internal', 'Something went wrong on the server.', 500);
}
