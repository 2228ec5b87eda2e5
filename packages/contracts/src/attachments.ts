import { z } from 'zod';

/**
 * Images attached to messages. History holds references (a file part whose URL is the media
 * route), never the bytes: the bytes are stored once and served by id.
 */

/** Largest image accepted, counted as it arrives (`413 too_large` past it). */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
/**
 * Largest image dimensions accepted, as the image's own header states them: each side, and the
 * pixel count. A few bytes can claim any size (a 30-byte WebP says 16777216 x 16777216); whatever
 * decodes the image later (a browser, a model provider, a thumbnailer) would need memory for that.
 */
export const MAX_IMAGE_SIDE = 16_384;
export const MAX_IMAGE_PIXELS = 50_000_000;
/** Most images one message carries. */
export const MAX_ATTACHMENTS_PER_MESSAGE = 4;
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
