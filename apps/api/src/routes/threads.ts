import {
  type CompactAnswer,
  createThreadBody,
  searchThreadsQuery,
  threadListQuery,
  updateThreadBody,
  type WorkspaceList,
} from '@chat/contracts';
import type { H3 } from 'h3';
import { idParam, readJson, readQuery } from '../platform/http';
import { authedRoutes } from './route';
import type { ApiServices } from './services';

export function registerThreadRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const { threads } = services;

  route(
    'post',
    '/api/threads',
    async (event, userId, signedIn) => {
      const body = await readJson(event, createThreadBody);
      return Response.json(await threads.create(userId, body, signedIn), { status: 201 });
    },
    { limit: 'threads' },
  );

  route(
    'get',
    '/api/workspaces',
    (_event, userId, signedIn): Promise<WorkspaceList> => threads.workspaces(userId, signedIn),
  );

  route('get', '/api/threads', (event, userId) => threads.list(userId, readQuery(event, threadListQuery)));

  route('get', '/api/search', (event, userId) => {
    const { q, limit } = readQuery(event, searchThreadsQuery);
    return threads.search(userId, q, limit);
  });

  route('get', '/api/threads/:id', (event, userId) => threads.detail(userId, idParam(event, 'id')));

  route('patch', '/api/threads/:id', async (event, userId) => {
    const threadId = idParam(event, 'id');
    return threads.update(userId, threadId, await readJson(event, updateThreadBody));
  });

  route('delete', '/api/threads/:id', async (event, userId) => {
    await threads.remove(userId, idParam(event, 'id'));
    return new Response(null, { status: 204 });
  });

  route(
    'post',
    '/api/threads/:id/compact',
    async (event, userId): Promise<CompactAnswer> =>
      await services.context.compactNow(userId, idParam(event, 'id')),
  );

  route('get', '/api/threads/:id/events', (event, userId) =>
    services.events.open(userId, idParam(event, 'id'), event.req.signal),
  );
}
