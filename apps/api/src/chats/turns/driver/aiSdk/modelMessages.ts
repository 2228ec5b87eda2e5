import type { AssistantContent, ModelMessage, ToolContent, ToolResultPart, UserContent } from 'ai';

/**
 * Stored messages as the model reads them. Memory keeps messages in one shape (`format: 2`: text,
 * file references, tool invocations with their results, step starts), written by the runner for
 * this driver and by Mastra for the other, so a chat written by one reads the same in the other.
 * An assistant message with tool steps becomes what the model said and did step by step: its
 * tool calls, then a tool message with their results, then what it said after them. A call with
 * no outcome is left out (the model's API refuses a call without a result), except the one a
 * resumed run is about to decide, whose call stays for its result to follow.
 */

/** A stored message: only what the model reads of it (memory's own type is the framework's). */
export interface StoredMessage {
  id: string;
  role: string;
  content: unknown;
}

interface StoredPart {
  type: string;
  [key: string]: unknown;
}

interface Invocation {
  state?: string;
  toolCallId: string;
  toolName: string;
  args?: unknown;
  result?: unknown;
  approval?: { approved?: boolean; reason?: string };
}

/**
 * A call a person denied, or one cut off by a Stop: what the model reads as its result (the
 * reason's text when there is one, as the other driver hands it over).
 */
export function deniedOutput(reason: string | undefined): ToolResultPart['output'] {
  return reason ? { type: 'text', value: reason } : { type: 'execution-denied' };
}

/** A tool's result as the model reads it (what the tool returned, as JSON). */
export function resultOutput(result: unknown): ToolResultPart['output'] {
  return typeof result === 'string'
    ? { type: 'text', value: result }
    : { type: 'json', value: (result ?? null) as never };
}

export function toModelMessages(stored: readonly StoredMessage[], keepOpenCall?: string): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const message of stored) {
    const parts = partsOf(message.content);
    if (message.role === 'user') {
      const content = userContent(parts);
      if (content.length > 0) messages.push({ role: 'user', content });
    } else if (message.role === 'assistant') {
      messages.push(...assistantSteps(parts, keepOpenCall));
    }
  }
  return messages;
}

function partsOf(content: unknown): StoredPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const value = content as { parts?: unknown; content?: unknown } | null;
  if (Array.isArray(value?.parts)) return value.parts as StoredPart[];
  if (typeof value?.content === 'string') return [{ type: 'text', text: value.content }];
  return [];
}

function userContent(parts: readonly StoredPart[]): Exclude<UserContent, string> {
  const content: Exclude<UserContent, string> = [];
  for (const part of parts) {
    if (part.type === 'text' && typeof part.text === 'string')
      content.push({ type: 'text', text: part.text });
    else if (part.type === 'file') {
      // A reference to the media route (never bytes): the attachment context resolves it just
      // before the model call, as it does for the other driver's calls.
      const data = typeof part.data === 'string' ? part.data : typeof part.url === 'string' ? part.url : '';
      const mediaType = String(part.mimeType ?? part.mediaType ?? 'application/octet-stream');
      if (data) {
        content.push({
          type: 'file',
          data,
          mediaType,
          ...(typeof part.filename === 'string' ? { filename: part.filename } : {}),
        });
      }
    }
  }
  return content;
}

/** One stored assistant message as model steps: assistant (text, calls), tool (results), ... */
function assistantSteps(parts: readonly StoredPart[], keepOpenCall: string | undefined): ModelMessage[] {
  const steps: ModelMessage[] = [];
  let said: Exclude<AssistantContent, string> = [];
  let results: ToolContent = [];
  const flush = () => {
    if (said.length > 0) steps.push({ role: 'assistant', content: said });
    if (results.length > 0) steps.push({ role: 'tool', content: results });
    said = [];
    results = [];
  };
  for (const part of parts) {
    if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') {
      // Text after a step's tool results is the next step's.
      if (results.length > 0) flush();
      said.push({ type: 'text', text: part.text });
    } else if (part.type === 'step-start') {
      if (results.length > 0) flush();
    } else if (part.type === 'tool-invocation') {
      const call = part.toolInvocation as Invocation | undefined;
      if (!call || typeof call.toolCallId !== 'string') continue;
      const output = outputOf(call);
      if (!output && call.toolCallId !== keepOpenCall) continue;
      said.push({
        type: 'tool-call',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.args ?? {},
      });
      if (output)
        results.push({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output });
    }
  }
  flush();
  return steps;
}

/** The outcome a stored call has (a result, a denial), undefined while it waits. */
function outputOf(call: Invocation): ToolResultPart['output'] | undefined {
  if (call.state === 'result') return resultOutput(call.result);
  if (call.state === 'output-denied' || call.approval?.approved === false) {
    return deniedOutput(call.approval?.reason);
  }
  return undefined;
}
