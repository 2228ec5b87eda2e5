import {
  type Attachment,
  type ExportedPart,
  exportedToolStates,
  type ImageAttachment,
  mediaUrl,
} from '@chat/contracts';
import type { MastraDBMessage } from '@mastra/core/agent';
import { AIV6Adapter } from '@mastra/core/agent/message-list';
import { attachmentIdOfPart } from '../attachments/parts';

/**
 * The one allow-list of what a message's parts carry into an export (P1), and back into stored
 * messages on an import (P2). Parts are AI SDK UI message parts, the form thread detail shows;
 * anything not listed here (provider bookkeeping, approval and run ids, data parts, parts a later
 * version of the AI SDK adds) stays behind, so nothing the server keeps for itself can leak into a
 * file by being added somewhere else.
 */

type UIPart = { type: string; [key: string]: unknown };

const toolStates = new Set<string>(exportedToolStates);
const TOOL_TYPE = /^tool-[A-Za-z0-9_.-]{1,64}$/;

/** A part as the export keeps it, or null for one it leaves out. */
export function toExportedPart(
  part: UIPart,
  /** The export's key of an image (by attachment id); undefined when its image cannot go along. */
  imageKeyOf: (attachmentId: string) => string | undefined,
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
      const image = attachmentId && imageKeyOf(attachmentId);
      const mediaType = string('mediaType');
      if (!image || !mediaType) return null;
      return {
        type: 'file',
        mediaType: mediaType as ImageAttachment['mediaType'],
        image,
        ...optional('filename', string('filename')),
      };
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

/** An exported part as a UI part again, its image (if any) at the new chat's media route. */
function toUIPart(part: ExportedPart, attachmentOf: (imageKey: string) => Attachment): UIPart {
  if ('image' in part) {
    const attachment = attachmentOf(part.image);
    return {
      type: 'file',
      mediaType: attachment.mediaType,
      url: mediaUrl(attachment.id),
      ...(part.filename === undefined ? {} : { filename: part.filename }),
    };
  }
  if ('toolCallId' in part && part.approval) {
    // Mastra names a decision by its tool call (thread detail shows the API's approval id instead).
    return { ...part, approval: { id: part.toolCallId, ...part.approval } };
  }
  return part;
}

/**
 * The stored form of an exported message: the content Mastra itself would store for the same UI
 * message (its own converter, one message at a time, so the cost stays linear in the chat).
 */
export function storedContent(
  message: { id: string; role: 'user' | 'assistant'; createdAt: Date; parts: readonly ExportedPart[] },
  attachmentOf: (imageKey: string) => Attachment,
): string {
  const stored: MastraDBMessage = AIV6Adapter.fromUIMessage({
    id: message.id,
    role: message.role,
    parts: message.parts.map((part) => toUIPart(part, attachmentOf)),
    metadata: { createdAt: message.createdAt },
  } as Parameters<typeof AIV6Adapter.fromUIMessage>[0]);
  return JSON.stringify(stored.content);
}
