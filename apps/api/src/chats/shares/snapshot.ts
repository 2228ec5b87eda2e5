import { randomBytes } from 'node:crypto';
import {
  attachmentIdOfUrl,
  type ChatMessage,
  type MessageDocument,
  type SharedMessage,
  type SharedPart,
  sharedMediaUrl,
  type TurnQueue,
} from '@chat/contracts';

/** 192 random bits, URL-safe (32 characters): unguessable, and the only key a reader needs. */
export function newShareToken(): string {
  return randomBytes(24).toString('base64url');
}

/** What a token can look like; anything else names no share. */
export function isShareTokenShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{16,128}$/.test(value);
}

/**
 * The part of a transcript a share may hold (H1): the messages of settled turns only. A turn that
 * has not settled is the thread's active one or waits in its queue (a failed attempt, Q11), and
 * its messages are the transcript's tail (turns run one at a time, a failed one blocks the rest):
 * the snapshot ends before the first message of any of them, so no running partial, no failed
 * attempt and nothing a steer brought into a running reply is ever shared.
 */
export function settledPart(messages: readonly ChatMessage[], turnQueue: TurnQueue): ChatMessage[] {
  const unsettled = new Set(
    [turnQueue.activeTurn, ...turnQueue.items].flatMap((turn) => (turn ? [turn.id] : [])),
  );
  const end = messages.findIndex((message) => {
    const turnId = message.metadata?.turnId;
    return turnId !== undefined && unsettled.has(turnId);
  });
  return end < 0 ? [...messages] : messages.slice(0, end);
}

/**
 * The snapshot of a transcript, built by construction from an allow-list: the role, the visible
 * text parts, the results of tool calls that finished, and the time of each user and assistant
 * message (and a document's size and pages, what its chip shows). Nothing else is copied (no metadata: no turn or branch ids, queue state, errors,
 * approvals or feedback; no message ids), so a field added to the internal shape later can
 * never leak into a share. Images are kept as URLs scoped to the share (`token`), which stop
 * working when it is revoked; the owner's media URL is never copied.
 */
export function toSharedMessages(messages: readonly ChatMessage[], token: string): SharedMessage[] {
  const shared: SharedMessage[] = [];
  for (const message of messages) {
    if (message.role !== 'user' && message.role !== 'assistant') continue;
    const documents = new Map((message.metadata?.documents ?? []).map((document) => [document.id, document]));
    const parts = message.parts.flatMap((part) => sharedPart(part, token, documents));
    if (parts.length === 0) continue;
    const createdAt = message.metadata?.createdAt;
    shared.push({ role: message.role, parts, ...(typeof createdAt === 'string' ? { createdAt } : {}) });
  }
  return shared;
}

function sharedPart(
  part: { type: string; [key: string]: unknown },
  token: string,
  documents: ReadonlyMap<string, MessageDocument>,
): SharedPart[] {
  if (part.type === 'text') {
    return typeof part.text === 'string' && part.text !== '' ? [{ type: 'text', text: part.text }] : [];
  }
  const attachmentId = part.type === 'file' ? attachmentIdOfUrl(part.url) : undefined;
  if (attachmentId && typeof part.mediaType === 'string') {
    const filename = typeof part.filename === 'string' ? { filename: part.filename } : {};
    // A document's chip says how big it is (its pages, for a PDF); never what the model read of it.
    const document = documents.get(attachmentId);
    const described = document
      ? { size: document.size, ...(document.pages === undefined ? {} : { pages: document.pages }) }
      : {};
    return [
      {
        type: 'file',
        mediaType: part.mediaType,
        url: sharedMediaUrl(token, attachmentId),
        ...filename,
        ...described,
      },
    ];
  }
  // AI SDK tool parts: `tool-<name>` (static tools) or `dynamic-tool` (with `toolName`). Only a
  // finished call's output is shown; its input, call id and approval never are.
  const toolName = part.type === 'dynamic-tool' ? part.toolName : toolNameOfType(part.type);
  if (typeof toolName === 'string' && part.state === 'output-available') {
    return [{ type: 'tool-result', toolName, output: part.output }];
  }
  return [];
}

function toolNameOfType(type: string): string | undefined {
  return type.startsWith('tool-') ? type.slice('tool-'.length) : undefined;
}
