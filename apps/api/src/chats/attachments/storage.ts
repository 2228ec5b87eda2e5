import type { Queryable } from '@chat/db';
import { schema } from '@chat/db';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';

/**
 * Where attachment bytes live. The API only ever stores an image once and reads it by id; an
 * object store can implement this later without touching anything else.
 */
export interface AttachmentStorage {
  /** Stores the bytes of a described attachment (inside the caller's transaction when it has one). */
  put(q: Queryable, attachmentId: string, bytes: Uint8Array): Promise<void>;
  /** The bytes, or undefined when they are gone. */
  get(attachmentId: string): Promise<Uint8Array<ArrayBuffer> | undefined>;
  /** The bytes of several attachments; missing ones are absent from the map. */
  getMany(attachmentIds: readonly string[]): Promise<Map<string, Uint8Array>>;
  /** Stores a document's extracted text, once, beside its bytes, with how many pieces it holds. */
  putText(q: Queryable, attachmentId: string, text: string, pieces: number): Promise<void>;
  /** The extracted texts of several documents, whole (a copy of them); missing ones are absent. */
  getTexts(attachmentIds: readonly string[]): Promise<Map<string, string>>;
  /**
   * At most `chars` characters of a document's text from character `from` (0-based), and how
   * many pieces the whole text holds; undefined when it is gone. The model context reads a long
   * text this way, only as far as its budget goes.
   */
  readTextSlice(
    attachmentId: string,
    from: number,
    chars: number,
  ): Promise<{ text: string; pieces: number | null } | undefined>;
  /**
   * Keeps how many pieces of each document the model read when its message first ran; a document
   * that has one keeps it (a later call of the same turn, or a regenerated reply, reads the same).
   */
  recordReads(reads: ReadonlyArray<{ attachmentId: string; read: number }>): Promise<void>;
}

const { attachmentBlobs, attachmentTexts } = schema;

/** Bytes in PostgreSQL (`attachment_blobs`, a document's text in `attachment_texts`), deleted with their attachment row (cascade). */
export function postgresAttachmentStorage(db: Queryable): AttachmentStorage {
  return {
    put: async (q, attachmentId, bytes) => {
      await q.insert(attachmentBlobs).values({ attachmentId, bytes });
    },
    get: async (attachmentId) => {
      const [row] = await db
        .select()
        .from(attachmentBlobs)
        .where(eq(attachmentBlobs.attachmentId, attachmentId));
      return row ? new Uint8Array(row.bytes) : undefined;
    },
    getMany: async (attachmentIds) => {
      if (attachmentIds.length === 0) return new Map();
      const rows = await db
        .select()
        .from(attachmentBlobs)
        .where(inArray(attachmentBlobs.attachmentId, [...attachmentIds]));
      return new Map(rows.map((row) => [row.attachmentId, new Uint8Array(row.bytes)]));
    },
    putText: async (q, attachmentId, text, pieces) => {
      await q.insert(attachmentTexts).values({ attachmentId, text, pieces });
    },
    getTexts: async (attachmentIds) => {
      if (attachmentIds.length === 0) return new Map();
      const rows = await db
        .select()
        .from(attachmentTexts)
        .where(inArray(attachmentTexts.attachmentId, [...attachmentIds]));
      return new Map(rows.map((row) => [row.attachmentId, row.text]));
    },
    readTextSlice: async (attachmentId, from, chars) => {
      // substr counts from 1; PostgreSQL decompresses a stored text only as far as the slice.
      const [row] = await db
        .select({
          text: sql<string>`substr(${attachmentTexts.text}, ${from + 1}, ${chars})`,
          pieces: attachmentTexts.pieces,
        })
        .from(attachmentTexts)
        .where(eq(attachmentTexts.attachmentId, attachmentId));
      return row;
    },
    recordReads: async (reads) => {
      for (const { attachmentId, read } of reads) {
        await db
          .update(attachmentTexts)
          .set({ readPieces: read })
          .where(and(eq(attachmentTexts.attachmentId, attachmentId), isNull(attachmentTexts.readPieces)));
      }
    },
  };
}
