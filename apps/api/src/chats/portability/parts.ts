import { type Attachment, type ExportedPart, exportedToolStates, mediaUrl } from '@chat/contracts';
import { attachmentIdOfPart } from '../attachments/parts';
import { transcriptTables } from '../transcript/tables';

/**
 * The one allow-list of what a message's parts carry into an export (P1), and back into stored
 * messages on an import (P2). Parts are AI SDK UI message parts, the form thread detail shows;
 * anything not listed here (provider bookkeeping, approval and run ids, data parts, parts a later
 * version of the AI SDK adds) stays behind, so nothing the server keeps for itself can leak into a
 * file by being added somewhere else.
 */

type UIPart = { type: string; [key: string]: unknown };

/** How an export names an attachment a part shows: an image's key, or a document's (D1). */
export type AttachmentKey = { image: string } | { document: string };

/** The attachment of a new chat behind an export's key. */
export type AttachmentOfKey = (key: AttachmentKey) => Attachment;

type FilePart = Extract<ExportedPart, { type: 'file' }>;

const toolStates = new Set<string>(exportedToolStates);
const TOOL_TYPE = /^tool-[A-Za-z0-9_.-]{1,64}$/;

/** A part as the export keeps it, or null for one it leaves out. */
export function toExportedPart(
  part: UIPart,
  /** The export's key of an attachment (by its id); undefined when it cannot go along. */
  keyOf: (attachmentId: string) => AttachmentKey | undefined,
): ExportedPart | null {
  const string = (name: string) => (typeof part[name] === 'string' ? (part[name] as string) : undefined);
  const optional = (name: string, value: unknown) => (value === undefined ? {} : { [name]: value });
  switch (part.type) {
    case 'text':
    case 'reasoning': {
      const text = string('text');
      if (!text) return null;
      return part.type === 'text' ? { type: 'text', text } : { type: 'reasoning', text };
    }
    case 'file': {
      const attachmentId = attachmentIdOfPart(part);
      const key = attachmentId && keyOf(attachmentId);
      const mediaType = string('mediaType');
      if (!key || !mediaType) return null;
      return {
        type: 'file',
        mediaType,
        ...key,
        ...optional('filename', string('filename')),
      } as FilePart;
    }
    case 'step-start':
      return { type: 'step-start' };
    case 'source-url': {
      const sourceId = string('sourceId');
      const url = string('url');
      if (sourceId === undefined || url === undefined) return null;
      return { type: 'source-url', sourceId, url, ...optional('title', string('title')) };
    }
    case 'source-document': {
      const sourceId = string('sourceId');
      const mediaType = string('mediaType');
      const title = string('title');
      if (sourceId === undefined || mediaType === undefined || title === undefined) return null;
      return {
        type: 'source-document',
        sourceId,
        mediaType,
        title,
        ...optional('filename', string('filename')),
      };
    }
  }
  const dynamic = part.type === 'dynamic-tool';
  if (!dynamic && !TOOL_TYPE.test(part.type)) return null;
  const toolCallId = string('toolCallId');
  const state = string('state');
  const toolName = string('toolName');
  if (!toolCallId || !state || !toolStates.has(state) || (dynamic && !toolName)) return null;
  const approval = part.approval as { approved?: unknown; reason?: unknown } | undefined;
  const decided = approval && {
    ...(typeof approval.approved === 'boolean' ? { approved: approval.approved } : {}),
    ...(typeof approval.reason === 'string' ? { reason: approval.reason } : {}),
  };
  return {
    type: part.type,
    ...(dynamic ? { toolName } : {}),
    toolCallId,
    state,
    ...optional('input', part.input),
    ...optional('output', part.output),
    ...optional('errorText', string('errorText')),
    ...optional('approval', decided),
  } as ExportedPart;
}

/** The key an exported part names its attachment by, if it shows one. */
export function attachmentKeyOf(part: ExportedPart): AttachmentKey | undefined {
  if ('image' in part) return { image: part.image };
  if ('document' in part) return { document: part.document };
  return undefined;
}

/** An exported part as a UI part again, its attachment (if any) at the new chat's media route. */
function toUIPart(part: ExportedPart, attachmentOf: AttachmentOfKey): UIPart {
  const key = attachmentKeyOf(part);
  if (key) {
    const attachment = attachmentOf(key);
    return {
      type: 'file',
      mediaType: attachment.mediaType,
      url: mediaUrl(attachment.id),
      ...('filename' in part && part.filename !== undefined ? { filename: part.filename } : {}),
    };
  }
  if ('toolCallId' in part && part.approval) {
    // Mastra names a decision by its tool call (thread detail shows the API's approval id instead).
    return { ...part, approval: { id: part.toolCallId, ...part.approval } };
  }
  return part;
}

/**
 * The stored form of an exported message: the content the transcript store itself would write for
 * the same UI message (its own converter, one message at a time, so the cost stays linear).
 */
export function storedContent(
  message: { id: string; role: 'user' | 'assistant'; createdAt: Date; parts: readonly ExportedPart[] },
  attachmentOf: AttachmentOfKey,
): string {
  return transcriptTables.storedContentOf({
    id: message.id,
    role: message.role,
    createdAt: message.createdAt,
    parts: message.parts.map((part) => toUIPart(part, attachmentOf)),
  });
}
