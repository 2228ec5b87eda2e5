import { z } from 'zod';
import { MAX_ATTACHMENTS_PER_MESSAGE } from './limits';

/**
 * Images attached to messages. History holds references (a file part whose URL is the media
 * route), never the bytes: the bytes are stored once and served by id.
 */

/** The image kinds accepted, recognised by their bytes (never by a name or declared type). */
export const attachmentMediaTypes = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type AttachmentMediaType = (typeof attachmentMediaTypes)[number];

/** One uploaded image, as the API describes it. */
export interface Attachment {
  id: string;
  name: string;
  mediaType: AttachmentMediaType;
  size: number;
  width: number;
  height: number;
}

/** `POST /api/threads/:id/attachments` answers `201 { attachment }`. */
export interface AttachmentAnswer {
  attachment: Attachment;
}

/** The ids a send or an edit carries: at most four distinct uploads of the same thread. */
export const attachmentIds = z
  .array(z.uuid())
  .max(MAX_ATTACHMENTS_PER_MESSAGE)
  .refine((ids) => new Set(ids).size === ids.length, 'Each attachment may be named once.');

/** Where the owner reads an image's bytes: the URL a stored file part carries. */
export function mediaUrl(attachmentId: string): string {
  return `/api/media/${attachmentId}`;
}

/** The attachment id of a media URL (`/api/media/:id`), or undefined for any other URL. */
export function attachmentIdOfUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  const match = /^\/api\/media\/([0-9a-f-]{36})$/i.exec(url);
  return match?.[1];
}

/** Where a share's reader reads an image of the snapshot; it stops working when the share is revoked. */
export function sharedMediaUrl(token: string, attachmentId: string): string {
  return `/api/shares/${token}/media/${attachmentId}`;
}
