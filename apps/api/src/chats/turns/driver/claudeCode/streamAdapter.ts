import type { SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { COMPACTION_PART, type CompactionProgress, type TokenUsage } from '@chat/contracts';
import type { UIMessageChunk } from 'ai';

/**
 * One turn's reading of the Claude Code messages (with `includePartialMessages`): the stream
 * events of the agent's own model calls as the product's UI message chunks, its tool uses as tool
 * chunks (the same cards as the built-in tools), its result as the turn's end. A subagent's
 * messages (`parent_tool_use_id` set) stay inside the tool call that started it.
 *
 * Model calls are steps: `start-step` at a call's `message_start`, `finish-step` once the call's
 * tool results are in (at the next call's start, or the result), as the AI SDK orders them.
 */
export type AdaptedMessage =
  | { kind: 'chunks'; chunks: UIMessageChunk[] }
  /** A model call starts: the place a steer taken in at the tool boundary before it shows. */
  | { kind: 'call-start'; chunks: UIMessageChunk[] }
  | { kind: 'session'; sessionId: string }
  /** A6: the agent compacted its conversation (the notice's chunks, then the host marks the branch). */
  | { kind: 'compacted'; chunks: UIMessageChunk[] }
  | { kind: 'done'; chunks: UIMessageChunk[]; usage: TokenUsage | undefined }
  | { kind: 'failed'; chunks: UIMessageChunk[]; error: Error }
  | { kind: 'none' };

interface OpenBlock {
  kind: 'text' | 'tool';
  id: string;
  toolName?: string;
  json: string;
  /** A call that may be the approved call made again (A5): its chunks wait for its input. */
  held?: UIMessageChunk[];
}

/** A call a person approved that the agent is to make again (A5, after a restart): shown as the first. */
export interface ApprovedCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export class TurnStreamAdapter {
  private started = false;
  private stepOpen = false;
  private readonly blocks = new Map<number, OpenBlock>();
  /** The tool calls this turn announced, so their results are matched (and no other's). */
  private readonly tools = new Set<string>();
  /** Tool calls a person denied (A5): their results show as denied, not as failed. */
  private readonly denied = new Set<string>();
  /** An error a model call reported on its assistant message, for the result that follows. */
  private callError: string | undefined;
  /** A5: the approved call the agent is to make again, until it does. */
  private approved: ApprovedCall | undefined;
  /** A call made again for an approved one: its result shows on the approved call's card. */
  private readonly aliases = new Map<string, string>();

  /**
   * `continuing`: the run goes on with a reply the host already shows (a decision after a
   * restart): no `start` again, and the step the call was in is open.
   */
  constructor(options: { continuing?: boolean } = {}) {
    if (options.continuing) {
      this.started = true;
      this.stepOpen = true;
    }
  }

  /**
   * A5: the agent is to make this approved call again (its session was restarted while it
   * waited): that call, when it comes with the same input, is the approved call's card, not a new
   * one.
   */
  expectApproved(call: ApprovedCall): void {
    this.approved = call;
    this.tools.add(call.toolCallId);
  }

  adapt(message: SDKMessage): AdaptedMessage {
    if (message.type === 'system' && message.subtype === 'init') {
      return { kind: 'session', sessionId: message.session_id };
    }
    // A6: the agent compacting its own conversation, as the product's compaction notice.
    if (message.type === 'system' && message.subtype === 'status') {
      if (message.status === 'compacting') return compaction({ status: 'compacting' });
      if (message.compact_result === 'failed')
        return compaction({ status: 'failed', error: AGENT_COMPACTION_FAILED });
      return { kind: 'none' };
    }
    if (message.type === 'system' && message.subtype === 'compact_boundary') {
      return { kind: 'compacted', chunks: compaction({ status: 'done' }).chunks };
    }
    if ('parent_tool_use_id' in message && message.parent_tool_use_id) return { kind: 'none' };
    if (message.type === 'stream_event') return this.streamEvent(message.event);
    if (message.type === 'assistant') {
      if (message.error) this.callError = message.error;
      return { kind: 'none' };
    }
    if (message.type === 'user') return { kind: 'chunks', chunks: this.toolResults(message.message.content) };
    if (message.type === 'result') {
      const chunks = this.closeStep();
      if (message.subtype === 'success' && !message.is_error) {
        chunks.push({ type: 'finish' });
        return { kind: 'done', chunks, usage: usageOf(message.usage) };
      }
      // What goes to the log names the failure, never the reply's text (a failed success's
      // `result` is the agent's last text): its kind, the API's status, the errors' first words.
      const status = message.subtype === 'success' ? `status ${message.api_error_status ?? 'unknown'}` : '';
      const errors = message.subtype === 'success' ? '' : (message.errors ?? []).join('; ').slice(0, 300);
      return {
        kind: 'failed',
        chunks,
        error: new Error(
          `the agent's turn failed (${this.callError ?? message.subtype}) ${status}${errors}`.trim(),
        ),
      };
    }
    return { kind: 'none' };
  }

  private streamEvent(event: Extract<SDKMessage, { type: 'stream_event' }>['event']): AdaptedMessage {
    switch (event.type) {
      case 'message_start': {
        const chunks = this.closeStep();
        if (!this.started) {
          this.started = true;
          chunks.push({ type: 'start', messageId: crypto.randomUUID() });
        }
        chunks.push({ type: 'start-step' });
        this.stepOpen = true;
        return { kind: 'call-start', chunks };
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') {
          const id = crypto.randomUUID();
          this.blocks.set(event.index, { kind: 'text', id, json: '' });
          const chunks: UIMessageChunk[] = [{ type: 'text-start', id }];
          if (block.text) chunks.push({ type: 'text-delta', id, delta: block.text });
          return { kind: 'chunks', chunks };
        }
        if (block.type === 'tool_use' || block.type === 'server_tool_use') {
          const start: UIMessageChunk = {
            type: 'tool-input-start',
            toolCallId: block.id,
            toolName: block.name,
          };
          const held = this.approved?.toolName === block.name ? [start] : undefined;
          this.blocks.set(event.index, {
            kind: 'tool',
            id: block.id,
            toolName: block.name,
            json: '',
            ...(held ? { held } : {}),
          });
          this.tools.add(block.id);
          return { kind: 'chunks', chunks: held ? [] : [start] };
        }
        return { kind: 'none' };
      }
      case 'content_block_delta': {
        const open = this.blocks.get(event.index);
        if (!open) return { kind: 'none' };
        if (event.delta.type === 'text_delta' && open.kind === 'text') {
          return { kind: 'chunks', chunks: [{ type: 'text-delta', id: open.id, delta: event.delta.text }] };
        }
        if (event.delta.type === 'input_json_delta' && open.kind === 'tool') {
          open.json += event.delta.partial_json;
          const delta: UIMessageChunk = {
            type: 'tool-input-delta',
            toolCallId: open.id,
            inputTextDelta: event.delta.partial_json,
          };
          if (open.held) {
            open.held.push(delta);
            return { kind: 'none' };
          }
          return { kind: 'chunks', chunks: [delta] };
        }
        return { kind: 'none' };
      }
      case 'content_block_stop': {
        const open = this.blocks.get(event.index);
        this.blocks.delete(event.index);
        if (!open) return { kind: 'none' };
        if (open.kind === 'text') return { kind: 'chunks', chunks: [{ type: 'text-end', id: open.id }] };
        const input = parsedInput(open.json);
        const approved = this.approved;
        if (open.held && approved && sameInput(input, approved.input)) {
          // The approved call made again: its card is the approved call's, already shown.
          this.approved = undefined;
          this.aliases.set(open.id, approved.toolCallId);
          return { kind: 'none' };
        }
        const available: UIMessageChunk = {
          type: 'tool-input-available',
          toolCallId: open.id,
          toolName: open.toolName ?? 'tool',
          input,
        };
        return { kind: 'chunks', chunks: [...(open.held ?? []), available] };
      }
      default:
        return { kind: 'none' };
    }
  }

  deny(toolCallId: string): void {
    this.denied.add(toolCallId);
  }

  private toolResults(content: unknown): UIMessageChunk[] {
    if (!Array.isArray(content)) return [];
    const chunks: UIMessageChunk[] = [];
    for (const block of content as Array<Record<string, unknown>>) {
      if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') continue;
      const toolCallId = this.aliases.get(block.tool_use_id) ?? block.tool_use_id;
      if (!this.tools.has(toolCallId)) continue;
      if (this.denied.has(toolCallId)) {
        chunks.push({ type: 'tool-output-denied', toolCallId });
        continue;
      }
      const output = resultText(block.content);
      chunks.push(
        block.is_error === true
          ? { type: 'tool-output-error', toolCallId, errorText: output }
          : { type: 'tool-output-available', toolCallId, output },
      );
    }
    return chunks;
  }

  /** The open step's end, once its tool results are in. */
  private closeStep(): UIMessageChunk[] {
    if (!this.stepOpen) return [];
    this.stepOpen = false;
    return [{ type: 'finish-step' }];
  }
}

/** What a person reads when the agent could not compact its conversation (it goes on as it can). */
export const AGENT_COMPACTION_FAILED = 'The agent could not summarize the earlier conversation.';

/** The compaction's progress, streamed to the reply's viewers and not stored (as the host's own, C3). */
function compaction(progress: CompactionProgress): Extract<AdaptedMessage, { kind: 'chunks' }> {
  return { kind: 'chunks', chunks: [{ type: COMPACTION_PART, data: progress, transient: true }] };
}

/** Two tool inputs are the same call's: equal as JSON, whatever the order of their keys. */
export function sameInput(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function parsedInput(json: string): unknown {
  if (json.trim() === '') return {};
  try {
    return JSON.parse(json);
  } catch {
    return { raw: json };
  }
}

/** A tool result's content as the text the model read. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) =>
      part.type === 'text' ? (part.text ?? '') : `[${part.type}]`,
    )
    .join('\n');
}

/** The turn's usage as the result reports it (C1): every model call of the turn, summed. */
function usageOf(
  usage:
    | { input_tokens?: number | null; output_tokens?: number | null; cache_read_input_tokens?: number | null }
    | undefined,
): TokenUsage | undefined {
  if (!usage) return undefined;
  const cached = usage.cache_read_input_tokens ?? 0;
  return {
    inputTokens: (usage.input_tokens ?? 0) + cached,
    outputTokens: usage.output_tokens ?? 0,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
  };
}
