import type { H3, H3Event } from 'h3';
import { userIdOf } from '../../auth/auth';
import { ApiError, apiErrorResponse } from '../../platform/errors';
import type { ChatServices } from '../context';

export type AuthedHandler = (event: H3Event, userId: string) => Promise<unknown> | unknown;
type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** Registers a route that needs a signed-in user (`401 unauthorized` otherwise). */
export function authedRoute(
  app: H3,
  services: ChatServices,
  method: Method,
  path: string,
  handler: AuthedHandler,
) {
  app[method](path, async (event) => {
    try {
      const userId = await userIdOf(services.auth, event.req.headers);
      if (!userId) throw new ApiError('unauthorized', 'Sign in first.');
      return await handler(event, userId);
    } catch (error) {
      // Refusals are expected outcomes, answered here; anything else goes to the app's onError.
      if (error instanceof ApiError) return apiErrorResponse(error);
      throw error;
    }
  });
}
