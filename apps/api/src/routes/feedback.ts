import { type FeedbackAnswer, feedbackBody } from '@chat/contracts';
import type { H3 } from 'h3';
import { idParam, readJson } from '../platform/http';
import { messageIdParam } from './branches';
import { authedRoutes } from './route';
import type { ApiServices } from './services';

export function registerFeedbackRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const { feedback } = services;

  route(
    'put',
    '/api/threads/:id/messages/:messageId/feedback',
    async (event, userId): Promise<FeedbackAnswer> => {
      const threadId = idParam(event, 'id');
      const messageId = messageIdParam(event);
      const body = await readJson(event, feedbackBody);
      return { messageId, feedback: await feedback.set(userId, threadId, messageId, body) };
    },
  );

  route('delete', '/api/threads/:id/messages/:messageId/feedback', async (event, userId) => {
    await feedback.clear(userId, idParam(event, 'id'), messageIdParam(event));
    return new Response(null, { status: 204 });
  });
}
