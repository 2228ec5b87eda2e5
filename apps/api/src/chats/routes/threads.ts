import { createThreadBody, renameThreadBody } from '@chat/contracts';
import type { H3 } from 'h3';
import { idParam, readJson } from '../../platform/http';
import type { ChatServices } from '../context';
import { authedRoute } from './route';

export function registerThreadRoutes(app: H3, services: ChatServices) {
  const route = (
    method: Parameters<typeof authedRoute>[2],
    path: string,
    handler: Parameters<typeof authedRoute>[4],
  ) => authedRoute(app, services, method, path, handler);

  route('post', '/api/threads', async (event, userId) => {
    const body = await readJson(event, createThreadBody);
    return Response.json(await services.threads.create(userId, body), { status: 201 });
  });

  route('get', '/api/threads', (_event, userId) => services.threads.list(userId));

  route('get', '/api/threads/:id', (event, userId) => services.threads.detail(userId, idParam(event, 'id')));

  route('patch', '/api/threads/:id', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const body = await readJson(event, renameThreadBody);
    return services.threads.rename(userId, threadId, body.title);
  });

  route('delete', '/api/threads/:id', async (event, userId) => {
    await services.threads.remove(userId, idParam(event, 'id'));
    return new Response(null, { status: 204 });
  });
}
