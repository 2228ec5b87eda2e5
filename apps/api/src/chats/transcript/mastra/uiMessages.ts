import { toAISdkMessages } from '@mastra/ai-sdk/ui';
import type { MastraDBMessage } from '@mastra/core/agent';
import { AIV6Adapter, MessageList } from '@mastra/core/agent/message-list';

/** A converted message before the API puts its own ids and metadata on it. */
export interface UIMessageLike {
  id: string;
  role: string;
  parts: readonly unknown[];
}

/**
 * Stored messages to AI SDK UI messages, as `toAISdkMessages(messages, { version: 'v7' })` of
 * `@mastra/ai-sdk/ui` gives them, in linear time. That function adds the whole list to one
 * Mastra MessageList, which compares each message with every one before it (quadratic; see
 * docs/benchmarks.md). Each message converts on its own here: plain text messages directly (the
 * common case, and cheap), anything else through Mastra's own adapter with a one-message list.
 * Signals are the one cross-message rule (Mastra folds their parts into a neighbouring reply), so
 * a transcript holding one goes through Mastra whole.
 */
export function toUIMessages(stored: readonly MastraDBMessage[]): UIMessageLike[] {
  const messages = stored.filter((message) => !isStoredSystemReminder(message));
  if (messages.some((message) => message.role === 'signal')) {
    return toAISdkMessages(messages, { version: 'v7' });
  }
  const converted: UIMessageLike[] = [];
  for (const message of messages) {
    const ui = plainTextMessage(message) ?? convertOne(message);
    if (ui && !isSystemReminder(ui)) converted.push(ui);
  }
  return converted;
}

/** Mastra's conversion of one message (a one-message list costs no comparisons). */
function convertOne(message: MastraDBMessage): UIMessageLike | undefined {
  const [stored] = new MessageList().add([message], 'memory').get.all.db();
  return stored ? AIV6Adapter.toUIMessage(stored) : undefined;
}

const PLAIN_TEXT_KEYS = new Set(['type', 'text', 'providerMetadata', 'createdAt']);

/**
 * A user or assistant message whose parts are all non-empty text converts to those texts. The
 * keys Mastra would add besides (`providerMetadata`, timestamps) never reach a browser (see
 * transcript.ts), so they are left out here.
 */
function plainTextMessage(message: MastraDBMessage): UIMessageLike | undefined {
  if (message.role !== 'user' && message.role !== 'assistant') return undefined;
  const content = message.content as {
    format?: number;
    parts?: unknown;
    toolInvocations?: unknown;
    metadata?: Record<string, unknown>;
  };
  if (content?.format !== 2 || !Array.isArray(content.parts) || content.parts.length === 0) return undefined;
  if (content.toolInvocations !== undefined) return undefined;
  const metadata = content.metadata ?? {};
  if ('systemReminder' in metadata || 'dynamicAgentsMdReminder' in metadata) return undefined;
  const parts: Array<{ type: 'text'; text: string }> = [];
  for (const part of content.parts as Array<Record<string, unknown>>) {
    if (part?.type !== 'text' || typeof part.text !== 'string' || part.text === '') return undefined;
    if (Object.keys(part).some((key) => !PLAIN_TEXT_KEYS.has(key))) return undefined;
    parts.push({ type: 'text', text: part.text });
  }
  return { id: message.id, role: message.role, parts };
}

/** As Mastra's recall leaves them out (`@mastra/memory`'s `isSystemReminderMessage`). */
function isStoredSystemReminder(message: MastraDBMessage): boolean {
  const content = message.content as { metadata?: Record<string, unknown>; parts?: unknown } | undefined;
  if (!content || typeof content !== 'object') return false;
  const metadata = content.metadata;
  const isRecord = (value: unknown) => typeof value === 'object' && value !== null;
  if (message.role === 'signal') {
    const signal = metadata?.signal as { type?: unknown } | undefined;
    return isRecord(signal) && (signal?.type === 'system-reminder' || signal?.type === 'reactive');
  }
  if (message.role !== 'user') return false;
  if (
    isRecord(metadata) &&
    (isRecord(metadata?.systemReminder) || 'dynamicAgentsMdReminder' in (metadata ?? {}))
  )
    return true;
  const parts = Array.isArray(content.parts)
    ? (content.parts as Array<{ type?: string; text?: unknown }>)
    : [];
  const firstText = parts.find((part) => part.type === 'text');
  return typeof firstText?.text === 'string' && firstText.text.startsWith('<system-reminder');
}

/** As `@mastra/ai-sdk/ui` drops them: a user message carrying a `<system-reminder`. */
function isSystemReminder(message: UIMessageLike & { metadata?: unknown }): boolean {
  const metadata = message.metadata as
    | { systemReminder?: unknown; dynamicAgentsMdReminder?: unknown }
    | undefined;
  if (metadata?.systemReminder || metadata?.dynamicAgentsMdReminder) return true;
  if (message.role !== 'user') return false;
  return (message.parts as Array<{ type?: string; text?: unknown }>).some(
    (part) => part.type === 'text' && typeof part.text === 'string' && part.text.includes('<system-reminder'),
  );
}
