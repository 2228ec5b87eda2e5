import {
  type AttachmentAnswer,
  DOCX_MEDIA_TYPE,
  isDocumentMediaType,
  MAX_DOCUMENT_BYTES,
} from '@chat/contracts';
import { getRouterParam, type H3, type H3Event } from 'h3';
import type { MediaFile } from '../chats/attachmentService';
import { documentTooLarge } from '../chats/attachments/documentCheck';
import { idParam } from '../platform/http';
import { readUploadedFile } from '../platform/multipartBody';
import { authedRoutes, publicRoutes } from './route';
import type { ApiServices } from './services';

export function registerAttachmentRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const publicRoute = publicRoutes(app);
  const { attachments } = services;

  // Multipart, one file (an image, or a document: the larger bound is read, each kind then keeps
  // its own); the request guard leaves this body to the route (bounded as it arrives).
  // It is read only once one of the account's upload slots is free (`platform/uploadSlots.ts`).
  route(
    'post',
    '/api/threads/:id/attachments',
    async (event, userId) => {
      const threadId = idParam(event, 'id');
      const release = await services.http.uploads.acquire(userId, event.req.signal);
      try {
        // Past the larger bound it can only be a document too large (an image's own bound is lower).
        const file = await readUploadedFile(event, MAX_DOCUMENT_BYTES, documentTooLarge);
        const answer: AttachmentAnswer = {
          attachment: await attachments.upload(userId, threadId, file, event.req.signal),
        };
        return Response.json(answer, { status: 201 });
      } finally {
        release();
      }
    },
    { limit: 'sends' },
  );

  route('get', '/api/media/:id', async (event, userId) => {
    const file = await attachments.media(userId, idParam(event, 'id', 'image'));
    return mediaResponse(event, file, 'private, max-age=86400');
  });

  // Anyone with the share link; not cached, so a revoked share stops serving at once.
  publicRoute('get', '/api/shares/:token/media/:id', async (event) => {
    const file = await attachments.sharedMedia(
      getRouterParam(event, 'token') ?? '',
      idParam(event, 'id', 'image'),
    );
    return mediaResponse(event, file, 'no-store');
  });
}

/**
 * What a served file may do when opened on its own: nothing. Text runs in a sandbox (no script,
 * no same origin, whatever it holds); a PDF only loads the browser's own viewer (a sandboxed
 * document would not get one), and nothing else. A Word document no browser shows: it downloads.
 */
const TEXT_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox";
const PDF_POLICY = "default-src 'none'; object-src 'self'; frame-ancestors 'none'";

/** Every kind of text is served as plain text: shown as it is, never rendered (HTML, SVG, ...). */
function servedType(mediaType: string): string {
  return isDocumentMediaType(mediaType) && mediaType !== 'application/pdf' && mediaType !== DOCX_MEDIA_TYPE
    ? 'text/plain; charset=utf-8'
    : mediaType;
}

/**
 * The bytes with the stored media type (never sniffed by the browser), shown inline under a strict
 * content security policy, with an ETag (an attachment's bytes never change, so its id is its
 * version).
 */
function mediaResponse(event: H3Event, file: MediaFile, cacheControl: string): Response {
  const etag = `"${file.id}"`;
  const headers = {
    'content-type': servedType(file.mediaType),
    'x-content-type-options': 'nosniff',
    'content-disposition': `${file.mediaType === DOCX_MEDIA_TYPE ? 'attachment' : 'inline'}; filename*=UTF-8''${encodeURIComponent(file.name)}`,
    'cache-control': cacheControl,
    etag,
  };
  // In place of the API's own policy (set on every response before the route runs).
  event.res.headers.set(
    'content-security-policy',
    file.mediaType === 'application/pdf' ? PDF_POLICY : TEXT_POLICY,
  );
  if (event.req.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers });
  return new Response(file.bytes, { status: 200, headers });
}
