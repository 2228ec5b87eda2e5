import {
  type Attachment,
  MAX_ATTACHMENT_BYTES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
  refusalMessages,
} from '@chat/contracts';
import type { Database } from '@chat/db';
import { ApiError, notFound } from '../platform/errors';
import { sniffImage } from '../platform/imageInfo';
import type { UploadedFile } from '../platform/multipartBody';
import {
  findOwnedAttachment,
  findThreadAttachment,
  insertAttachment,
  toAttachment,
} from './attachments/repository';
import type { AttachmentStorage } from './attachments/storage';
import { findShare } from './shares/repository';
import { isShareTokenShape } from './shares/snapshot';
import { requireOwnedThread } from './threads/repository';

export interface AttachmentServiceDeps {
  db: Database;
  storage: AttachmentStorage;
}

/** An image to serve: its bytes and what the response says about them. */
export interface MediaFile {
  id: string;
  name: string;
  mediaType: string;
  bytes: Uint8Array<ArrayBuffer>;
}

/**
 * Image attachments: uploads (checked by their bytes, stored once, owned by the thread's owner)
 * and serving them, to the owner or through a live share.
 */
export class AttachmentService {
  constructor(private readonly deps: AttachmentServiceDeps) {}

  async upload(ownerId: string, threadId: string, file: UploadedFile): Promise<Attachment> {
    const { db, storage } = this.deps;
    await requireOwnedThread(db, threadId, ownerId);
    if (file.bytes.byteLength > MAX_ATTACHMENT_BYTES)
      throw new ApiError('too_large', refusalMessages.too_large.image);
    const info = sniffImage(file.bytes);
    if (!info) {
      throw new ApiError('unsupported_media_type', refusalMessages.unsupported_media_type.image);
    }
    if (!withinImageBounds(info)) {
      throw new ApiError('too_large', refusalMessages.too_large.imageDimensions);
    }
    const row = await db.transaction(async (tx) => {
      // Locked so the thread cannot be deleted in between (its cascade would miss this upload).
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const created = await insertAttachment(tx, {
        threadId,
        ownerId,
        name: cleanName(file.name, info.mediaType),
        mediaType: info.mediaType,
        size: file.bytes.byteLength,
        width: info.width,
        height: info.height,
      });
      await storage.put(tx, created.id, file.bytes);
      return created;
    });
    return toAttachment(row);
  }

  /** The owner's image; anyone else (and a missing one) gets 404. */
  async media(ownerId: string, attachmentId: string): Promise<MediaFile> {
    const row = await findOwnedAttachment(this.deps.db, attachmentId, ownerId);
    return await this.withBytes(row);
  }

  /**
   * An image of a shared snapshot: only while the share exists (revoking it stops this at once),
   * and only an image the snapshot shows.
   */
  async sharedMedia(token: string, attachmentId: string): Promise<MediaFile> {
    const share = isShareTokenShape(token) ? await findShare(this.deps.db, token) : undefined;
    if (!share || !JSON.stringify(share.messages).includes(attachmentId)) throw notFound('image');
    const row = await findThreadAttachment(this.deps.db, share.threadId, attachmentId);
    return await this.withBytes(row);
  }

  private async withBytes(
    row: { id: string; name: string; mediaType: string } | undefined,
  ): Promise<MediaFile> {
    const bytes = row ? await this.deps.storage.get(row.id) : undefined;
    if (!row || !bytes) throw notFound('image');
    return { id: row.id, name: row.name, mediaType: row.mediaType, bytes };
  }
}

/** Each side and the pixel count within the contract's bounds (checked before anything is stored). */
function withinImageBounds(info: { width: number; height: number }): boolean {
  return (
    info.width <= MAX_IMAGE_SIDE &&
    info.height <= MAX_IMAGE_SIDE &&
    info.width * info.height <= MAX_IMAGE_PIXELS
  );
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/** A file name safe to show and to send back in a header: no path, no control characters, bounded. */
export function cleanName(name: string, mediaType: string): string {
  const base = (name.split(/[/\\]/).at(-1) ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 200);
  return base || `image.${EXTENSIONS[mediaType] ?? 'img'}`;
}
