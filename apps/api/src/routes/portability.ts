import {
  chatExportV1,
  exportQuery,
  MAX_IMPORT_BYTES,
  type NewChatAnswer,
  refusalMessages,
} from '@chat/contracts';
import { getRouterParam, type H3 } from 'h3';
import type { ChatDownload } from '../chats/portabilityService';
import { ApiError } from '../platform/errors';
import { idParam, readJson, readQuery } from '../platform/http';
import { readJsonBody } from '../platform/requestBody';
import { messageIdParam } from './branches';
import { authedRoutes } from './route';
import type { ApiServices } from './services';

/** Taking a chat anywhere (P1-P4): export, import, "New chat from here", continue a shared chat. */
export function registerPortabilityRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const { portability } = services;

  route('get', '/api/threads/:id/export', async (event, userId) => {
    const { format } = readQuery(event, exportQuery);
    return downloadResponse(await portability.exportChat(userId, idParam(event, 'id'), format));
  });

  // A JSON body larger than any other route's, so it is read here once an upload slot is free
  // (the request guard leaves it to the route), and it makes a chat: counted as one.
  route(
    'post',
    '/api/imports',
    async (event, userId) => {
      // The slot is held until the chat is written: the import is in memory until then.
      const release = await services.http.uploads.acquire(userId, event.req.signal);
      try {
        await readJsonBody(event, MAX_IMPORT_BYTES, importTooLarge);
        const document = await readJson(event, chatExportV1);
        return created({ thread: await portability.importChat(userId, document, event.req.signal) });
      } finally {
        release();
      }
    },
    { limit: 'threads' },
  );

  route(
    'post',
    '/api/threads/:id/messages/:messageId/fork',
    async (event, userId) =>
      created({ thread: await portability.fork(userId, idParam(event, 'id'), messageIdParam(event)) }),
    { limit: 'threads' },
  );

  route(
    'post',
    '/api/shares/:token/continue',
    async (event, userId) =>
      created({ thread: await portability.continueShare(userId, getRouterParam(event, 'token') ?? '') }),
    { limit: 'threads' },
  );
}

const importTooLarge = () => new ApiError('too_large', refusalMessages.too_large.importBody);

function created(answer: NewChatAnswer): Response {
  return Response.json(answer, { status: 201 });
}

/** A file the browser saves rather than shows, under the chat's name; never cached. */
function downloadResponse(download: ChatDownload): Response {
  const ascii = download.filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '');
  return new Response(download.body, {
    headers: {
      'content-type': download.contentType,
      'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(download.filename)}`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
