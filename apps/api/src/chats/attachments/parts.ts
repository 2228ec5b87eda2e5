import { type Attachment, attachmentIdOfUrl, mediaUrl } from '@chat/contracts';

/**
 * The file parts of a stored message: references to the media route, never bytes. Small
 * functions, so every reader of stored messages (detail, shares, the model context) treats them
 * the same way.
 */

/** The part a message's attachment is stored as in memory: its URL is the owner's media route. */
export function fileReferencePart(attachment: Attachment) {
  return {
    type: 'file' as const,
    mediaType: attachment.mediaType,
    url: mediaUrl(attachment.id),
    filename: attachment.name,
  };
}

/**
 * The same reference as Mastra stores it (format 2: the media route is the part's data), for a
 * user message the API writes itself (a reply repaired after a crash or an early failure).
 */
export function storedFileReferencePart(attachment: Attachment) {
  return {
    type: 'file' as const,
    mimeType: attachment.mediaType,
    data: mediaUrl(attachment.id),
    filename: attachment.name,
  };
}

/**
 * Mastra's UI conversion turns a stored reference into `data:image/png;base64,/api/media/:id`
 * (it takes any non-URL data for base64): the reference is what follows the comma.
 */
const WRAPPED_REFERENCE = /^data:[^,]*,(\/api\/media\/[0-9a-f-]{36})$/i;

function referenceOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return attachmentIdOfUrl(value) ?? attachmentIdOfUrl(WRAPPED_REFERENCE.exec(value)?.[1]);
}

/** The attachment a (UI or stored) part refers to, if it is one of our file references. */
export function attachmentIdOfPart(part: { type: string; [key: string]: unknown }): string | undefined {
  if (part.type !== 'file') return undefined;
  return referenceOf(part.url) ?? referenceOf(part.data);
}

/**
 * A UI part as the page gets it: one of our file references carries the media route as its URL
 * (whatever form the conversion left it in); every other part is unchanged.
 */
export function visibleFilePart<T extends { type: string; [key: string]: unknown }>(part: T): T {
  const id = attachmentIdOfPart(part);
  return id ? { ...part, url: mediaUrl(id) } : part;
}

/** Every attachment the given parts refer to, in order. */
export function attachmentIdsOfParts(parts: readonly { type: string; [key: string]: unknown }[]): string[] {
  return parts.flatMap((part) => attachmentIdOfPart(part) ?? []);
}
