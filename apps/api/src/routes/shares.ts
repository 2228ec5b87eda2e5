import type { ShareAnswer, ShareList } from '@chat/contracts';
import { getRouterParam, type H3, type H3Event } from 'h3';
import { idParam } from '../platform/http';
import { authedRoutes, publicRoutes } from './route';
import type { ApiServices } from './services';

function tokenParam(event: H3Event): string {
  return getRouterParam(event, 'token') ?? '';
}

export function registerShareRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const publicRoute = publicRoutes(app);
  const { shares } = services;

  route('post', '/api/threads/:id/shares', async (event, userId) => {
    const answer: ShareAnswer = { share: await shares.create(userId, idParam(event, 'id')) };
    return Response.json(answer, { status: 201 });
  });

  route('get', '/api/threads/:id/shares', async (event, userId): Promise<ShareList> => {
    return { shares: await shares.list(userId, idParam(event, 'id')) };
  });

  route('delete', '/api/shares/:token', async (event, userId) => {
    await shares.revoke(userId, tokenParam(event));
    return new Response(null, { status: 204 });
  });

  // Anyone with the link, no session. Not cached, not indexed: a revoke takes effect at once.
  publicRoute('get', '/api/shares/:token', async (event) =>
    Response.json(await shares.read(tokenParam(event)), {
      headers: { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' },
    }),
  );
}
