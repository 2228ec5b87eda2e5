import {
  type ChatExport,
  characterCount,
  type ErrorCode,
  importProblems,
  MAX_ATTACHMENTS_PER_MESSAGE,
  MAX_TEXT_LENGTH,
  refusalMessages,
} from '@chat/contracts';
import { ApiError } from '../../platform/errors';
import { sniffImage } from '../../platform/imageInfo';
import { checkDocument, type ReadDocument } from '../attachments/documentCheck';
import { type CheckedImage, checkImage } from '../attachments/imageCheck';
import type { NewChatDocument, NewChatImage } from './chatWriter';

/**
 * What an import must be beyond its schema (P2), checked before anything is written: every key
 * names something of the same file, each version lists its messages once and oldest first after
 * the one it was made from, what only replies have is on replies, user messages keep a send's
 * limits (text, images and documents per message), every image and document is used and passes
 * the checks of an upload (a document's text is read from its bytes here, as at an upload: the
 * file never says what its text is). The first problem found is refused, naming where it is
 * (`error.field`), and nothing is written.
 */
export async function checkImport(
  document: ChatExport,
  read: ReadDocument,
): Promise<{ images: NewChatImage[]; documents: NewChatDocument[] }> {
  const messageKeys = uniqueKeys(document.messages, 'messages');
  const versionIndex = new Map<string, number>();
  document.versions.forEach((version, index) => {
    if (versionIndex.has(version.id)) refuse(`versions.${index}.id`, importProblems.duplicateKey);
    versionIndex.set(version.id, index);
  });
  const imageKeys = uniqueKeys(document.images, 'images');
  const exportedDocuments = document.documents ?? [];
  const documentKeys = uniqueKeys(exportedDocuments, 'documents');
  if (!versionIndex.has(document.shownVersion)) refuse('shownVersion', importProblems.unknownVersion);

  const createdAt = new Map(document.messages.map((message) => [message.id, Date.parse(message.createdAt)]));
  const listed = new Set<string>();
  document.versions.forEach((version, index) => {
    const where = `versions.${index}`;
    if (index === 0 && version.parent !== null) refuse(`${where}.parent`, importProblems.originalHasParent);
    if (version.parent !== null) {
      const parent = versionIndex.get(version.parent);
      if (parent === undefined) refuse(`${where}.parent`, importProblems.unknownVersion);
      if (parent >= index) refuse(`${where}.parent`, importProblems.parentNotBefore);
    }
    if (version.editOf !== null && !messageKeys.has(version.editOf)) {
      refuse(`${where}.editOf`, importProblems.unknownMessage);
    }
    const inVersion = new Set<string>();
    let previous = Number.NEGATIVE_INFINITY;
    version.messages.forEach((key, position) => {
      const at = `${where}.messages.${position}`;
      const time = createdAt.get(key);
      if (time === undefined) refuse(at, importProblems.unknownMessage);
      if (inVersion.has(key)) refuse(at, importProblems.listedTwice);
      // Mastra orders a memory thread by time: a version out of time order would not read back as listed.
      if (time < previous) refuse(at, importProblems.outOfOrder);
      inVersion.add(key);
      listed.add(key);
      previous = time;
    });
  });

  const usedImages = new Set<string>();
  const usedDocuments = new Set<string>();
  const toolCalls = new Set<string>();
  document.messages.forEach((message, index) => {
    const where = `messages.${index}`;
    if (!listed.has(message.id)) refuse(where, importProblems.notInAnyVersion);
    const replyOnly =
      message.model !== undefined ||
      message.interrupted ||
      message.feedback !== undefined ||
      message.usage !== undefined;
    if (message.role === 'user' && replyOnly) refuse(where, importProblems.repliesOnly);
    let attached = 0;
    let text = '';
    message.parts.forEach((part, position) => {
      if ('image' in part) {
        if (!imageKeys.has(part.image))
          refuse(`${where}.parts.${position}.image`, importProblems.unknownImage);
        usedImages.add(part.image);
        attached += 1;
      } else if ('document' in part) {
        if (!documentKeys.has(part.document))
          refuse(`${where}.parts.${position}.document`, importProblems.unknownDocument);
        usedDocuments.add(part.document);
        attached += 1;
      } else if (part.type === 'text' && 'text' in part) text += part.text;
      if ('toolCallId' in part) toolCalls.add(part.toolCallId);
    });
    if (attached > MAX_ATTACHMENTS_PER_MESSAGE)
      refuse(`${where}.parts`, refusalMessages.too_large.images, 'too_large');
    // A user message was a send: it keeps a send's limit.
    if (message.role === 'user' && characterCount(text.trim()) > MAX_TEXT_LENGTH) {
      refuse(`${where}.parts`, refusalMessages.too_large.text, 'too_large');
    }
  });
  document.approvals.forEach((approval, index) => {
    if (!toolCalls.has(approval.toolCallId))
      refuse(`approvals.${index}.toolCallId`, importProblems.unknownToolCall);
  });

  // Last: the bytes are the costly part.
  const images = document.images.map((image, index) => {
    const where = `images.${index}`;
    if (!usedImages.has(image.id)) refuse(where, importProblems.unusedImage);
    const bytes = Buffer.from(image.data, 'base64');
    let checked: CheckedImage;
    try {
      checked = checkImage(bytes, image.name);
    } catch (error) {
      if (error instanceof ApiError) refuse(`${where}.data`, error.message, error.code);
      throw error;
    }
    if (checked.mediaType !== image.mediaType) {
      refuse(
        `${where}.mediaType`,
        importProblems.mediaTypeMismatch(checked.mediaType),
        'unsupported_media_type',
      );
    }
    return { key: image.id, ...checked, readBytes: async () => bytes };
  });
  const documents: NewChatDocument[] = [];
  // One at a time, each read as at an upload (out of process, under the OS's limits), within the
  // reading time the caller gives the whole import.
  for (const [index, exported] of exportedDocuments.entries()) {
    const where = `documents.${index}`;
    if (!usedDocuments.has(exported.id)) refuse(where, importProblems.unusedDocument);
    const bytes = Buffer.from(exported.data, 'base64');
    // An image is not a document, whatever the file calls it.
    const image = sniffImage(bytes);
    if (image) {
      refuse(
        `${where}.mediaType`,
        importProblems.mediaTypeMismatch(image.mediaType),
        'unsupported_media_type',
      );
    }
    let checked: Awaited<ReturnType<typeof checkDocument>>;
    try {
      checked = await checkDocument(bytes, exported.name, read);
    } catch (error) {
      if (error instanceof ApiError) refuse(`${where}.data`, error.message, error.code);
      throw error;
    }
    if (!checked) {
      refuse(`${where}.data`, refusalMessages.unsupported_media_type.attachment, 'unsupported_media_type');
    }
    if (checked.mediaType !== exported.mediaType) {
      refuse(
        `${where}.mediaType`,
        importProblems.mediaTypeMismatch(checked.mediaType),
        'unsupported_media_type',
      );
    }
    const { text, ...described } = checked;
    documents.push({
      key: exported.id,
      ...described,
      readBytes: async () => bytes,
      readText: async () => text,
    });
  }
  return { images, documents };
}

function uniqueKeys(items: ReadonlyArray<{ id: string }>, list: string): Set<string> {
  const keys = new Set<string>();
  items.forEach((item, index) => {
    if (keys.has(item.id)) refuse(`${list}.${index}.id`, importProblems.duplicateKey);
    keys.add(item.id);
  });
  return keys;
}

/** Refuses the import, naming the first problem and where it is. */
function refuse(field: string, problem: string, code: ErrorCode = 'bad_request'): never {
  throw new ApiError(
    code,
    refusalMessages.bad_request.invalidBody(`${field}: `, problem.replace(/\.$/, '')),
    {
      field,
    },
  );
}
