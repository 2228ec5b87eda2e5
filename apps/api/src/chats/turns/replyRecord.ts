import type { ReplySnapshot } from '@chat/db';
import type { UIMessageChunk } from 'ai';
import type { SteerMessage } from './driver/types';

/** One part of a stored message, in memory's own shape (`format: 2`). */
export type StoredPart = ReplySnapshot['messages'][number]['parts'][number];
export type RecordedMessage = ReplySnapshot['messages'][number];

interface ToolInvocation {
  state: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
  result?: unknown;
  approval?: { id: string; approved?: boolean; reason?: string };
}

/**
 * The reply of a turn as its runner saw it stream, message by message, in the shape memory stores
 * (text, tool invocations with their results, step starts): the runner's own copy, from which
 * whatever memory lacks is written (a save that failed in an outage, a run cut off by a crash).
 * Steers the reply took in sit between its messages as user messages. `currentText` is the text of
 * the message streaming now: the part that grows between two step ends.
 */
export class ReplyRecord {
  private constructor(private readonly messages: RecordedMessage[]) {}

  static empty(): ReplyRecord {
    return new ReplyRecord([]);
  }

  /**
   * A reply rebuilt from its checkpoint: the messages as of the last step end, and the text the
   * message named `currentId` had reached since (`currentText`, which starts with that message's
   * text at the step end).
   */
  static restore(
    snapshot: ReplySnapshot | null,
    current: { id: string | null; text: string },
    now = new Date(),
  ): ReplyRecord {
    const messages = structuredClone(snapshot?.messages ?? []);
    const record = new ReplyRecord(messages);
    if (!current.id) return record;
    let message = messages.find((candidate) => candidate.id === current.id);
    if (!message) {
      message = { id: current.id, role: 'assistant', createdAt: now.toISOString(), parts: [] };
      messages.push(message);
    }
    const known = textOf(message);
    // The checkpointed text grew from the step end's; anything else is not this message's text.
    if (current.text.length > known.length && current.text.startsWith(known)) {
      appendText(message, current.text.slice(known.length));
    }
    return record;
  }

  /** The message streaming now (the last assistant message), if any. */
  get current(): RecordedMessage | undefined {
    return this.messages.findLast((message) => message.role === 'assistant');
  }

  get currentId(): string | null {
    return this.current?.id ?? null;
  }

  /** The text of the message streaming now. */
  get currentText(): string {
    const current = this.current;
    return current ? textOf(current) : '';
  }

  /** Every message, oldest first (the record's own: it keeps growing while the run streams). */
  get all(): readonly RecordedMessage[] {
    return this.messages;
  }

  get assistantMessages(): RecordedMessage[] {
    return this.messages.filter((message) => message.role === 'assistant');
  }

  /** All of the reply's text, message after message. */
  get text(): string {
    return this.assistantMessages.map(textOf).join('');
  }

  /** The tool calls of the reply that have an outcome (a result, or a refusal). */
  get finishedToolCalls(): string[] {
    return this.assistantMessages.flatMap((message) =>
      message.parts.flatMap((part) => {
        const invocation = toolInvocationOf(part);
        return invocation && !waits(invocation.state) ? [invocation.toolCallId] : [];
      }),
    );
  }

  /**
   * The reply is more than the text of one message (tool steps, steers, several messages): only
   * then does its checkpoint need the messages besides the text.
   */
  get structured(): boolean {
    return (
      this.messages.length > 1 || this.messages.some((m) => m.parts.some((part) => part.type !== 'text'))
    );
  }

  /** The checkpoint of the reply (every message as it stands). */
  snapshot(): ReplySnapshot {
    return { messages: structuredClone(this.messages) };
  }

  /**
   * Takes one chunk of the stream. `start` opens the message it names (a continued reply names
   * the one it continues); after a steer boundary the continuation is already open.
   */
  take(chunk: UIMessageChunk, now?: Date): void {
    // Most of a reply's chunks are its words: no clock read for them (a Date each, per word of
    // every reply streaming) unless one opens a message.
    if (chunk.type === 'text-delta')
      appendText(this.current ?? this.currentOrUnnamed(now ?? new Date()), chunk.delta);
    else this.takeOther(chunk, now ?? new Date());
  }

  private takeOther(chunk: UIMessageChunk, now: Date): void {
    switch (chunk.type) {
      case 'start':
        if (chunk.messageId && !this.messages.some((message) => message.id === chunk.messageId))
          this.open(chunk.messageId, now);
        break;
      case 'start-step': {
        // Memory marks where each step after the first began.
        const current = this.current;
        if (current && current.parts.length > 0) current.parts.push({ type: 'step-start' });
        break;
      }
      case 'tool-input-available':
        this.setTool(chunk.toolCallId, now, (known) => ({
          ...known,
          state: known?.state && !waits(known.state) ? known.state : 'call',
          toolCallId: chunk.toolCallId,
          toolName: chunk.toolName,
          args: chunk.input,
        }));
        break;
      case 'tool-output-available':
        this.setTool(chunk.toolCallId, now, (known) => ({
          ...known,
          ...identity(known, chunk.toolCallId),
          state: 'result',
          result: chunk.output,
        }));
        break;
      case 'tool-output-error':
        this.setTool(chunk.toolCallId, now, (known) => ({
          ...known,
          ...identity(known, chunk.toolCallId),
          state: 'result',
          result: { error: chunk.errorText },
        }));
        break;
      case 'tool-approval-request':
        // As memory keeps a call that waits for a person (Mastra's own save writes the same).
        this.setTool(chunk.toolCallId, now, (known) => ({
          ...known,
          ...identity(known, chunk.toolCallId),
          state: 'approval-requested',
          approval: { id: chunk.approvalId },
        }));
        break;
      case 'tool-output-denied':
        this.setTool(chunk.toolCallId, now, (known) => ({
          ...known,
          ...identity(known, chunk.toolCallId),
          state: 'output-denied',
          approval: { id: chunk.toolCallId, approved: false },
        }));
        break;
      default:
        break;
    }
  }

  /**
   * Steers taken in at a step boundary: the reply so far is one finished message, the steers follow
   * it as user messages, and the reply goes on as `continuationMessageId`.
   */
  takeSteers(steers: SteerMessage[], continuationMessageId: string, now = new Date()): void {
    // One millisecond apart, so the transcript sorts them as they came.
    let at = now.getTime();
    for (const steer of steers) {
      this.messages.push({
        id: steer.messageId,
        role: 'user',
        createdAt: new Date(at++).toISOString(),
        parts: [{ type: 'text', text: steer.text }],
      });
    }
    this.open(continuationMessageId, new Date(at));
  }

  /**
   * Steers the reply took in that the record does not hold yet (taken in after what it holds: the
   * run ended, or crashed, before their boundary was recorded): they follow everything in it.
   */
  appendSteers(steers: Array<SteerMessage & { at?: Date | null }>, now = new Date()): void {
    const known = new Set(this.messages.map((message) => message.id));
    for (const steer of steers) {
      if (known.has(steer.messageId)) continue;
      const last = this.messages.at(-1);
      const after = last ? new Date(last.createdAt).getTime() + 1 : 0;
      this.messages.push({
        id: steer.messageId,
        role: 'user',
        createdAt: new Date(Math.max((steer.at ?? now).getTime(), after)).toISOString(),
        parts: [{ type: 'text', text: steer.text }],
      });
    }
  }

  /** Every tool call still waiting for its result is closed as declined with `reason` (see below). */
  closeOpenToolCalls(reason: string): void {
    for (const message of this.assistantMessages) {
      for (const part of message.parts) {
        const invocation = toolInvocationOf(part);
        if (invocation && waits(invocation.state)) this.closeToolCall(invocation.toolCallId, reason);
      }
    }
  }

  /**
   * A tool call that will never get a result (its turn was stopped as it waited for an approval):
   * kept as declined with `reason`, so its card shows its end and the next model call sees a
   * complete exchange.
   */
  closeToolCall(toolCallId: string, reason: string): void {
    this.setTool(toolCallId, new Date(), (known) => ({
      ...known,
      ...identity(known, toolCallId),
      state: known?.state && !waits(known.state) ? known.state : 'output-denied',
      approval: { id: toolCallId, approved: false, reason },
    }));
  }

  /** A person decided on a tool call the reply waited on (H3): the call carries the decision. */
  decide(toolCallId: string, approved: boolean): void {
    this.setTool(toolCallId, new Date(), (known) => ({
      ...known,
      ...identity(known, toolCallId),
      state: known?.state === 'approval-requested' ? 'approval-responded' : (known?.state ?? 'call'),
      approval: { id: toolCallId, approved },
    }));
  }

  private open(id: string, now: Date): RecordedMessage {
    const last = this.messages.at(-1);
    // Never before the message it follows (clocks of a busy process can repeat a millisecond).
    const after = last ? new Date(last.createdAt).getTime() + 1 : 0;
    const message: RecordedMessage = {
      id,
      role: 'assistant',
      createdAt: new Date(Math.max(now.getTime(), after)).toISOString(),
      parts: [],
    };
    this.messages.push(message);
    return message;
  }

  /** A driver that sends text before any `start` (it should not) still has it recorded. */
  private currentOrUnnamed(now: Date): RecordedMessage {
    return this.current ?? this.open(crypto.randomUUID(), now);
  }

  private setTool(
    toolCallId: string,
    now: Date,
    change: (known: ToolInvocation | undefined) => ToolInvocation,
  ): void {
    for (const message of this.assistantMessages) {
      const index = message.parts.findIndex((part) => toolInvocationOf(part)?.toolCallId === toolCallId);
      const part = message.parts[index];
      if (index < 0 || !part) continue;
      message.parts[index] = { ...part, toolInvocation: change(toolInvocationOf(part)) };
      return;
    }
    this.currentOrUnnamed(now).parts.push({ type: 'tool-invocation', toolInvocation: change(undefined) });
  }
}

/** The text of a recorded or stored message, its text parts joined. */
export function textOf(message: { parts: readonly StoredPart[] }): string {
  return message.parts.map((part) => (part.type === 'text' ? String(part.text ?? '') : '')).join('');
}

/** A part's tool invocation, if it is one. */
export function toolInvocationOf(part: StoredPart): ToolInvocation | undefined {
  if (part.type !== 'tool-invocation') return undefined;
  const invocation = part.toolInvocation as ToolInvocation | undefined;
  return typeof invocation?.toolCallId === 'string' ? invocation : undefined;
}

/** A call with no outcome yet: made, or waiting for (or just given) a person's decision. */
function waits(state: string): boolean {
  return state === 'call' || state === 'approval-requested' || state === 'approval-responded';
}

function identity(known: ToolInvocation | undefined, toolCallId: string) {
  return { toolCallId, toolName: known?.toolName ?? 'tool', args: known?.args ?? {} };
}

function appendText(message: RecordedMessage, delta: string): void {
  if (delta === '') return;
  const last = message.parts.at(-1);
  if (last?.type === 'text') last.text = String(last.text ?? '') + delta;
  else message.parts.push({ type: 'text', text: delta });
}
