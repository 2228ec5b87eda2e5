import { z } from 'zod';
import { documentMediaTypes, imageMediaTypes } from './attachments';
import { refusalMessages } from './errors';
import { feedbackRatings } from './feedback';
import {
  MAX_ATTACHMENT_BYTES,
  MAX_DOCUMENT_BYTES,
  MAX_EXPORT_TEXT_LENGTH,
  MAX_IMPORT_APPROVALS,
  MAX_IMPORT_DOCUMENTS,
  MAX_IMPORT_IMAGES,
  MAX_IMPORT_MESSAGES,
  MAX_IMPORT_NOTES,
  MAX_IMPORT_VERSION_MESSAGES,
  MAX_IMPORT_VERSIONS,
} from './limits';
import type { Thread } from './threads';

/**
 * A chat as a file (P1, P2): `GET /api/threads/:id/export?format=json` writes it, `POST
 * /api/imports` reads it back as a new chat. Version 1 of the format, documented in
 * docs/features/chat/export-format.md; its JSON Schema is `packages/contracts/schema/chat-export.v1.json`,
 * generated from this file (`pnpm --filter @chat/contracts schema`) and checked against it by the
 * API's tests.
 *
 * Built from an allow-list: what a person sees of their chat (every version of it, the replies'
 * models, stops, feedback, notes and tool approvals) and nothing the server keeps for itself (no
 * hidden instructions, queue, account or database ids). Messages, versions, images and documents
 * are named by keys that only mean something inside one file (`m1`, `v1`, `i1`, `d1`). Images and
 * documents travel inside the file, as base64, so an export moves between servers whole.
 */

export const CHAT_EXPORT_FORMAT = 'queued-turn-chat.export';
export const CHAT_EXPORT_VERSION = 1;

/** A name inside one export: letters, digits, `_` and `-`. */
const key = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a key of letters, digits, _ or -');
/** A time, as ISO 8601 in UTC (`2026-12-01T17:10:35.266Z`). */
const time = z.iso.datetime();
const text = z.string().max(MAX_EXPORT_TEXT_LENGTH);
/** The words of a count past its bound (errors.ts), as the refusal's issue. */
const tooMany = (what: string, max: number) =>
  refusalMessages.too_large.importCount(what, max).replace(/\.$/, '');

/**
 * The states of an AI SDK tool part a finished message can hold: a call cut off before its result,
 * a result, an error, a call not run (denied, or stopped while it waited for a decision). The
 * states of a call in progress (streaming its input, waiting for a decision) are never final.
 */
export const exportedToolStates = [
  'input-available',
  'output-available',
  'output-error',
  'output-denied',
] as const;

/** What a tool call shows: AI SDK's tool part, without provider bookkeeping or approval ids. */
const toolCallFields = {
  toolCallId: z.string().min(1).max(200),
  state: z.enum(exportedToolStates),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  errorText: text.optional(),
  /** A person's decision on the call, when it needed one (H3). */
  approval: z.strictObject({ approved: z.boolean().optional(), reason: text.optional() }).optional(),
};

/**
 * The parts of a message, as AI SDK UI message parts (https://ai-sdk.dev), with one change: an
 * image names an entry of `images` (a document one of `documents`) instead of a URL.
 */
export const exportedPart = z.union([
  z.strictObject({ type: z.literal('text'), text }),
  z.strictObject({ type: z.literal('reasoning'), text }),
  z.strictObject({
    type: z.literal('file'),
    mediaType: z.enum(imageMediaTypes),
    /** The key of the image in `images`. */
    image: key,
    filename: z.string().max(255).optional(),
  }),
  z.strictObject({
    type: z.literal('file'),
    mediaType: z.enum(documentMediaTypes),
    /** The key of the document in `documents` (D1). */
    document: key,
    filename: z.string().max(255).optional(),
  }),
  z.strictObject({ type: z.literal('step-start') }),
  z.strictObject({
    type: z.literal('source-url'),
    sourceId: z.string().max(200),
    url: z.string().max(2048),
    title: z.string().max(1000).optional(),
  }),
  z.strictObject({
    type: z.literal('source-document'),
    sourceId: z.string().max(200),
    mediaType: z.string().max(200),
    title: z.string().max(1000),
    filename: z.string().max(255).optional(),
  }),
  z.strictObject({
    type: z.templateLiteral(['tool-', z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/)]),
    ...toolCallFields,
  }),
  z.strictObject({ type: z.literal('dynamic-tool'), toolName: z.string().min(1).max(64), ...toolCallFields }),
]);
export type ExportedPart = z.infer<typeof exportedPart>;

export const exportedMessage = z.strictObject({
  id: key,
  role: z.enum(['user', 'assistant']),
  createdAt: time,
  parts: z.array(exportedPart).max(200),
  /** The model that wrote a reply (`local`, `openai:gpt-4o-mini`, ...). */
  model: z.string().min(1).max(200).optional(),
  /** A reply cut short by Stop (S2). */
  interrupted: z.literal(true).optional(),
  /** A reply's token usage as the model reported it (C1). */
  usage: z
    .strictObject({
      inputTokens: z.int().min(0),
      outputTokens: z.int().min(0),
      cachedInputTokens: z.int().min(0).optional(),
    })
    .optional(),
  /** The exporting person's feedback on a reply (H2). */
  feedback: z
    .strictObject({
      rating: z.enum(feedbackRatings),
      comment: z.string().max(MAX_EXPORT_TEXT_LENGTH).optional(),
    })
    .optional(),
});
export type ExportedMessage = z.infer<typeof exportedMessage>;

/**
 * One version of the conversation (B1): its messages in order, oldest first. The first version is
 * the chat's original; every other one was made by editing (or regenerating at) a user message of
 * `parent`, and holds `parent`'s messages before that one, then its own. A message shared by
 * several versions is listed in each.
 */
export const exportedVersion = z.strictObject({
  id: key,
  /** The version it was made from; null for the original (and for one whose parent is gone). */
  parent: key.nullable(),
  /** The parent's user message this version replaces, when it is still in the export. */
  editOf: key.nullable(),
  /** When the person last had this version on screen: which version a message's `‹ k / n ›` opens. */
  lastShownAt: time,
  messages: z
    .array(key)
    .max(MAX_IMPORT_VERSION_MESSAGES, tooMany('messages in a version', MAX_IMPORT_VERSION_MESSAGES)),
});
export type ExportedVersion = z.infer<typeof exportedVersion>;

export const exportedImage = z.strictObject({
  id: key,
  name: z.string().min(1).max(255),
  mediaType: z.enum(imageMediaTypes),
  /** The image's bytes, base64. */
  data: z.base64().max(Math.ceil(MAX_ATTACHMENT_BYTES / 3) * 4),
});
export type ExportedImage = z.infer<typeof exportedImage>;

/**
 * A document a message carries (D1): its file, as uploaded. Its text is not in the file: an
 * import reads it from the bytes again, with the checks of an upload, so the text the model gets
 * is always the file's own.
 */
export const exportedDocument = z.strictObject({
  id: key,
  name: z.string().min(1).max(255),
  mediaType: z.enum(documentMediaTypes),
  /** The document's bytes, base64. */
  data: z.base64().max(Math.ceil(MAX_DOCUMENT_BYTES / 3) * 4),
});
export type ExportedDocument = z.infer<typeof exportedDocument>;

export const exportedNote = z.strictObject({
  text: z.string().min(1).max(MAX_EXPORT_TEXT_LENGTH),
  createdAt: time,
});

/** A decided tool approval (H3): which call, what it was asked to do, and what the person said. */
export const exportedApproval = z.strictObject({
  toolCallId: z.string().min(1).max(200),
  toolName: z.string().min(1).max(64),
  args: z.unknown(),
  status: z.enum(['approved', 'denied', 'cancelled']),
  createdAt: time,
  decidedAt: time.nullable(),
});

export const chatExportV1 = z.strictObject({
  format: z.literal(CHAT_EXPORT_FORMAT),
  version: z.literal(CHAT_EXPORT_VERSION),
  exportedAt: time,
  chat: z.strictObject({ title: z.string().trim().min(1).max(200), createdAt: time }),
  /** The version shown when the chat was exported; the import shows it too. */
  shownVersion: key,
  versions: z
    .array(exportedVersion)
    .min(1)
    .max(MAX_IMPORT_VERSIONS, tooMany('versions', MAX_IMPORT_VERSIONS)),
  /** Every message of every version, once, in the order versions first hold them. */
  messages: z.array(exportedMessage).max(MAX_IMPORT_MESSAGES, tooMany('messages', MAX_IMPORT_MESSAGES)),
  images: z.array(exportedImage).max(MAX_IMPORT_IMAGES, tooMany('images', MAX_IMPORT_IMAGES)),
  /**
   * The documents the messages carry (D1). Optional, and written only when there are any: a chat
   * without documents exports exactly as before, and a file from before documents imports as is.
   */
  documents: z
    .array(exportedDocument)
    .max(MAX_IMPORT_DOCUMENTS, tooMany('documents', MAX_IMPORT_DOCUMENTS))
    .optional(),
  notes: z.array(exportedNote).max(MAX_IMPORT_NOTES, tooMany('notes', MAX_IMPORT_NOTES)),
  approvals: z.array(exportedApproval).max(MAX_IMPORT_APPROVALS, tooMany('approvals', MAX_IMPORT_APPROVALS)),
});
export type ChatExport = z.infer<typeof chatExportV1>;

/** The export formats of `GET /api/threads/:id/export`. */
export const exportQuery = z.object({ format: z.enum(['md', 'json']) });
export type ExportFormat = z.infer<typeof exportQuery>['format'];

/** `POST /api/imports`, `.../fork` and `/api/shares/:token/continue` answer `201 { thread }`: a new chat. */
export interface NewChatAnswer {
  thread: Thread;
}
