import { attachmentMediaTypes } from '@chat/contracts';
import { sql } from 'drizzle-orm';
import { customType, index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { user } from './authSchema';
import { threads } from './chatSchema';
import { createdAt } from './columns';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });

/**
 * An uploaded image or document (D1): what it is (checked from its bytes) and whose. History holds references to
 * it (`/api/media/:id`), never its bytes. Deleting the thread deletes it; an upload no message
 * ever carried (`sent_at` null) is removed after a day.
 */
export const attachments = pgTable(
  'attachments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    ownerId: text('owner_id')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    mediaType: text('media_type', { enum: attachmentMediaTypes }).notNull(),
    size: integer('size').notNull(),
    width: integer('width').notNull(),
    height: integer('height').notNull(),
    /** A PDF's page count; null for anything else. */
    pages: integer('pages'),
    /** The words of a document's extracted text; null for an image. */
    words: integer('words'),
    createdAt: createdAt(),
    /** When a send or an edit first carried it; null: an upload nobody sent (swept after 24 h). */
    sentAt: timestamp('sent_at', { withTimezone: true }),
  },
  (t) => [
    index('attachments_thread_idx').on(t.threadId),
    index('attachments_unsent_idx').on(t.createdAt).where(sql`${t.sentAt} is null`),
  ],
);

/**
 * The bytes of an attachment, apart from its description so listing never reads them. The
 * PostgreSQL implementation of the API's attachment storage; an object store could replace it.
 */
export const attachmentBlobs = pgTable('attachment_blobs', {
  attachmentId: uuid('attachment_id')
    .primaryKey()
    .references(() => attachments.id, { onDelete: 'cascade' }),
  bytes: bytea('bytes').notNull(),
});

/**
 * A document's text, extracted once at upload (a PDF's pages apart by form feeds). The model gets
 * it, within a budget, from here just before each call; memory holds only the reference.
 */
export const attachmentTexts = pgTable('attachment_texts', {
  attachmentId: uuid('attachment_id')
    .primaryKey()
    .references(() => attachments.id, { onDelete: 'cascade' }),
  text: text('text').notNull(),
  /**
   * How many pieces the budget takes the text by: a PDF's pages, a text file's lines (its line
   * breaks and one). Counted once here so a model call can read just the start of a long text
   * and still say "pages 1-40 of 120". Null only for a row no one has counted (none after the
   * migration that added it).
   */
  pieces: integer('pieces'),
  /**
   * How many of those pieces the model read when the message carrying the document first ran
   * (its budget then): what the transcript's note of a cut says. Null until it ran.
   */
  readPieces: integer('read_pieces'),
});

export type AttachmentRow = typeof attachments.$inferSelect;
