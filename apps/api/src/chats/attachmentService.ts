import { type Attachment, isDocumentMediaType, refusalMessages } from '@chat/contracts';
import type { Database } from '@chat/db';
import { ApiError, notFound } from '../platform/errors';
import type { UploadedFile } from '../platform/multipartBody';
import { checkDocument } from './attachments/documentCheck';
import type { DocumentReader } from './attachments/documentText';
import { checkedImage } from './attachments/imageCheck';
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
  /** `AUTH_ALLOW_GUESTS`: when off, a guest's share links answer nothing (`findShare`). */
  allowGuests: boolean;
  storage: AttachmentStorage;
  /** How a document's text is read at upload: out of process, under the OS's limits. */
  reader: DocumentReader;
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

  /** `signal` ends the upload's reading when its request is gone. */
  async upload(
    ownerId: string,
    threadId: string,
    file: UploadedFile,
    signal?: AbortSignal,
  ): Promise<Attachment> {
    const { db, storage } = this.deps;
    await requireOwnedThread(db, threadId, ownerId);
    const { text, pieces, ...described } = await this.check(ownerId, file, signal);
    const row = await db.transaction(async (tx) => {
      // Locked so the thread cannot be deleted in between (its cascade would miss this upload).
      await requireOwnedThread(tx, threadId, ownerId, { lock: true });
      const created = await insertAttachment(tx, { threadId, ownerId, ...described });
      await storage.put(tx, created.id, file.bytes);
      if (text !== undefined && pieces !== null && isDocumentMediaType(described.mediaType))
        await storage.putText(tx, created.id, text, pieces);
      return created;
    });
    return toAttachment(row);
  }

  /**
   * An image, else a document (its text extracted once, here), else `415 unsupported_media_type`:
   * by the bytes, never by a name or a declared type.
   */
  private async check(ownerId: string, file: UploadedFile, signal: AbortSignal | undefined) {
    const image = checkedImage(file.bytes, file.name);
    if (image) return { ...image, pages: null, words: null, text: undefined, pieces: null };
    const document = await checkDocument(file.bytes, file.name, (kind, bytes) =>
      this.deps.reader.read(ownerId, kind, bytes, { signal }),
    );
    if (document) return document;
    throw new ApiError('unsupported_media_type', refusalMessages.unsupported_media_type.attachment);
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
    const share = isShareTokenShape(token)
      ? await findShare(this.deps.db, token, { guestOwners: this.deps.allowGuests })
      : undefined;
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
