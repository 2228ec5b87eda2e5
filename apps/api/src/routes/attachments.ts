import { type AttachmentAnswer, MAX_ATTACHMENT_BYTES } from '@chat/contracts';
import { getRouterParam, type H3 } from 'h3';
import type { MediaFile } from '../chats/attachmentService';
import { idParam } from '../platform/http';
import { readUploadedFile } from '../platform/multipartBody';
import { authedRoutes, publicRoutes } from './route';
import type { ApiServices } from './services';

export function registerAttachmentRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const publicRoute = publicRoutes(app);
  const { attachments } = services;

  // Multipart, one file; the request guard leaves this body to the route (bounded as it arrives).
  // It is read only once one of the account's upload slots is free (`platform/uploadSlots.ts`).
  route(
    'post',
    '/api/threads/:id/attachments',
    async (event, userId) => {
      const threadId = idParam(event, 'id');
      const release = await services.http.uploads.acquire(userId, event.req.signal);
      try {
        const file = await readUploadedFile(event, MAX_ATTACHMENT_BYTES);
        const answer: AttachmentAnswer = { attachment: await attachments.upload(userId, threadId, file) };
        return Response.json(answer, { status: 201 });
      } finally {
        release();
      }
    },
    { limit: 'sends' },
  );

  route('get', '/api/media/:id', async (event, userId) => {
    const file = await attachments.media(userId, idParam(event, 'id', 'image'));
    return mediaResponse(event.req.headers, file, 'private, max-age=86400');
  });

  // Anyone with the share link; not cached, so a revoked share stops serving at once.
  publicRoute('get', '/api/shares/:token/media/:id', async (event) => {
    const file = await attachments.sharedMedia(
      getRouterParam(event, 'token') ?? '',
      idParam(event, 'id', 'image'),
    );
    return mediaResponse(event.req.headers, file, 'no-store');
  });
}

/**
 * The bytes with the stored media type (never sniffed by the browser), shown inline, with an ETag
 * (an attachment's bytes never change, so its id is its version).
 */
function mediaResponse(request: Headers, file: MediaFile, cacheControl: string): Response {
  const etag = `"${file.id}"`;
  const headers = {
    'content-type': file.mediaType,
    'x-content-type-options': 'nosniff',
    'content-disposition': `inline; filename*=UTF-8''${encodeURIComponent(file.name)}`,
    'cache-control': cacheControl,
    etag,
  };
  if (request.get('if-none-match') === etag) return new Response(null, { status: 304, headers });
  return new Response(file.bytes, { status: 200, headers });
}
