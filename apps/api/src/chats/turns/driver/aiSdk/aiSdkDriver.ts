import type { LanguageModelV4 } from '@ai-sdk/provider';
import { type ToolMode, turnErrorMessages } from '@chat/contracts';
import {
  type LanguageModelUsage,
  type ModelMessage,
  type SystemModelMessage,
  stepCountIs,
  streamText,
  type ToolSet,
  type UIMessageChunk,
} from 'ai';
import { steerReminder } from '../../../../agent/steerReminder';
import { LiveToolPolicy } from '../../../../agent/toolPolicy';
import { TOOL_DENIED_REASON } from '../../../../agent/tools';
import { isDatabaseUnavailable } from '../../../../platform/databaseErrors';
import { WordedFailure } from '../../../../platform/errors';
import { storedFileReferencePart } from '../../../attachments/parts';
import { hiddenInstructions } from '../hiddenInstructions';
import { summaryBy, tokenUsageOf } from '../modelCalls';
import { MAX_MODEL_STEPS } from '../modelSteps';
import type {
  DriverEvent,
  DriverTurn,
  RuntimeConnection,
  RuntimeDriver,
  SteerMessage,
  SummaryRequest,
  SuspendedCall,
} from '../types';
import { deniedOutput, resultOutput, type StoredMessage, toModelMessages } from './modelMessages';
import { callOfToken, tokenOfCall } from './resumeToken';
import { partsOf, type UiChunkOptions, uiChunkOf } from './uiChunks';

/** What the AI SDK driver needs of the host: models, tools and the conversation's window. */
export interface AiSdkDriverDeps {
  /** The built-in instructions every call starts with. */
  instructions: string;
  /** The configured models (M1, M2). */
  models: {
    has(id: string): boolean;
    model(id: string): LanguageModelV4 | undefined;
    defaultModel(): LanguageModelV4;
  };
  /** Each tool's mode in a chat that changed nothing (T1). */
  defaultModes(): Record<string, ToolMode>;
  /** The chat's tools as AI SDK tools for one run, executed with its thread and live settings. */
  tools(run: { threadId: string; resourceId: string; policy?: LiveToolPolicy }): Promise<ToolSet>;
  /** The newest `messages` stored messages of a conversation, oldest first (one bounded read). */
  window(conversationId: string, messages: number): Promise<StoredMessage[]>;
}

/**
 * The second runtime driver: one AI SDK `streamText` request per run, its own step loop doing what
 * the Mastra agent's hooks do. Before each step (`prepareStep`) it reads the chat's tool settings
 * (an `off` tool is not offered) and, after the first, takes in the steers of now (`takeSteers`);
 * before each tool call it asks whether the call must wait for a person (`toolApproval`). A call
 * that must wait ends the run `suspended`, and everything a resume needs is what the host keeps:
 * the call itself (in the resume token) and the conversation in memory. So a resume, in this
 * process or another after a restart, holds no state of an earlier run: it reads the window,
 * executes or denies the call, and streams the rest of the reply.
 *
 * It has no save of its own: the runner writes the run's messages into memory from what streamed
 * (`ensureTurnStored`, the one writer of memory's message shape), the same messages in the same
 * shape as a Mastra run stores, so a chat goes on in either driver.
 */
export class AiSdkDriver implements RuntimeDriver {
  constructor(private readonly deps: AiSdkDriverDeps) {}

  async send(turn: DriverTurn): Promise<RuntimeConnection> {
    const steering = { open: true };
    const events = this.run(turn, steering);
    return {
      events,
      // Its step loop is the same for a started run and a resumed one.
      steerable: true,
      close: () => {
        steering.open = false;
        void events.return(undefined);
      },
    };
  }

  async summarize(request: SummaryRequest): Promise<string> {
    return await summaryBy(this.deps.models.defaultModel(), request);
  }

  async discard(): Promise<void> {
    // A suspended run leaves nothing behind: the host's records are all there is.
  }

  private async *run(turn: DriverTurn, steering: { open: boolean }): AsyncGenerator<DriverEvent> {
    const { models } = this.deps;
    // M2: a chat whose model was removed from the configuration fails here, never on another model.
    if (turn.model && !models.has(turn.model)) {
      yield { type: 'error', error: new WordedFailure(turnErrorMessages.modelRemoved(turn.model)) };
      return;
    }
    const model = (turn.model ? models.model(turn.model) : undefined) ?? models.defaultModel();
    const { segment, abortSignal } = turn;
    let prepared: { messages: ModelMessage[]; tools: ToolSet; policy: LiveToolPolicy | undefined };
    try {
      prepared = await this.prepare(turn);
    } catch (error) {
      // Nothing was produced or stored: the host may send the run again.
      if (isDatabaseUnavailable(error)) yield { type: 'unavailable', cause: error };
      else yield { type: 'error', error };
      return;
    }
    const { messages, tools, policy } = prepared;
    // Opaque to the host; this driver resumes from the suspended call's own token, not from this.
    yield { type: 'resume-token', token: crypto.randomUUID() };

    if (segment.kind === 'resume') {
      const call = callOfToken(segment.call.resumeToken) ?? callInWindow(messages, segment.call.toolCallId);
      if (!call) {
        yield {
          type: 'error',
          error: new Error(`the suspended call ${segment.call.toolCallId} is not in the window`),
        };
        return;
      }
      const outcome = await decide(call, segment.decision, tools, messages, abortSignal);
      yield { type: 'chunk', chunk: outcome.chunk };
      messages.push({ role: 'tool', content: [outcome.result] });
    }

    const system: SystemModelMessage[] = [
      { role: 'system', content: this.deps.instructions },
      // A resumed run is the same turn: its call gets what the started one got (the summary above
      // all, since the window leaves out what it stands for).
      ...hiddenInstructions(turn).map((content): SystemModelMessage => ({ role: 'system', content })),
    ];
    const names = Object.keys(tools);
    const offered = () => (policy ? policy.offered(names) : names);
    // Steers taken in, by the step that takes them in (the stream is read behind the loop).
    const boundaries = new Map<number, { steers: SteerMessage[]; continuationMessageId: string }>();
    const delivered: SteerMessage[] = [];
    const calls = new Map<string, Omit<SuspendedCall, 'resumeToken'>>();

    const result = streamText({
      model,
      instructions: system,
      messages,
      tools,
      activeTools: offered(),
      stopWhen: stepCountIs(MAX_MODEL_STEPS),
      abortSignal,
      // T2: read again before each step; the first step's settings were read as the run started.
      prepareStep: async ({ stepNumber, messages: stepMessages }) => {
        if (stepNumber > 0) await policy?.refresh();
        const steers = steering.open && stepNumber > 0 ? await turn.takeSteers() : [];
        if (steers.length === 0) {
          return { activeTools: offered() };
        }
        boundaries.set(stepNumber, { steers, continuationMessageId: crypto.randomUUID() });
        delivered.push(...steers);
        return {
          activeTools: offered(),
          // Carried forward to the later steps, as the reply goes on after the steers.
          messages: [
            ...stepMessages,
            ...steers.map((steer): ModelMessage => ({ role: 'user', content: steer.text })),
          ],
          // One reminder naming every steer this run took in, on each later step too.
          instructions: [
            ...system,
            { role: 'system', content: steerReminder(delivered.map((steer) => steer.text)) },
          ],
        };
      },
      // H3 with T2: the chat's setting for the tool now decides whether this call waits.
      toolApproval: async ({ toolCall }) => {
        if (!policy) return 'not-applicable';
        await policy.refresh();
        return policy.modeOf(toolCall.toolName) === 'ask' ? 'user-approval' : 'not-applicable';
      },
    });

    const streamed: { error?: unknown } = {};
    const options: UiChunkOptions = {
      tools,
      // A resumed reply goes on in the message the person sees (the runner opens it).
      sendStart: segment.kind === 'start',
      messageId: crypto.randomUUID(),
      // The stream carries text; the host words the failure from the error itself (F3).
      onError: (error: unknown) => {
        streamed.error = error;
        return describeError(error);
      },
    };
    // The run's parts as the UI chunks `toUIMessageStream` would make (`uiChunks.ts`), and those as
    // driver events, the boundaries and suspensions in their places: read here, not in a generator
    // or a web stream of their own, since each one a word passes costs promise jobs (ADR-055, 058).
    const { reader: parts, partOf } = partsOf(result);
    let step = -1;
    let failed = false;
    let done = false;
    // The run's total usage, as its `finish` part carries it (what `result.totalUsage` resolves
    // to). That getter would tee the run's stream once more, and this driver holds the stream's
    // reader: the tee fails (an error made and caught on every run) after the read is done.
    let totalUsage: LanguageModelUsage | undefined;
    try {
      for (;;) {
        const read = await parts.read();
        if (read.done) {
          done = true;
          break;
        }
        const part = partOf(read.value);
        if (part.type === 'finish') totalUsage = part.totalUsage;
        const chunk = uiChunkOf(part, options);
        if (chunk === undefined) continue;
        if (chunk.type === 'start-step') {
          step += 1;
          const boundary = boundaries.get(step);
          if (boundary) yield { type: 'steer-boundary', ...boundary };
        } else if (chunk.type === 'tool-input-available') {
          calls.set(chunk.toolCallId, {
            toolCallId: chunk.toolCallId,
            toolName: chunk.toolName,
            args: chunk.input ?? {},
          });
        } else if (chunk.type === 'tool-approval-request') {
          // The host names the request by its own id and shows it once it is recorded.
          const call = calls.get(chunk.toolCallId);
          if (call) yield { type: 'suspended', call: { ...call, resumeToken: tokenOfCall(call) } };
        } else if (chunk.type === 'error') {
          failed = true;
          yield { type: 'error', error: streamed.error ?? new Error(chunk.errorText) };
          continue;
        } else if (chunk.type === 'abort') {
          continue;
        }
        yield { type: 'chunk', chunk };
      }
    } finally {
      steering.open = false;
      // Closed early (Stop, the host's close, a failure): the run's stream is cancelled, as leaving
      // a `for await` over it did.
      if (!done) parts.cancel().catch(() => {});
    }
    if (failed || abortSignal.aborted) return;
    const usage = tokenUsageOf(
      totalUsage ?? (await Promise.resolve(result.totalUsage).catch(() => undefined)),
    );
    if (usage) yield { type: 'usage', usage };
    // No save of its own to fail: the runner writes the run's messages (see the class comment).
    yield { type: 'turn-complete', saved: true };
  }

  /** Reads what the run needs before its first model call: settings, window, tools. */
  private async prepare(turn: DriverTurn) {
    const { conversation, message, segment, history } = turn;
    const read = turn.toolModes;
    const policy = read ? new LiveToolPolicy(() => read(), this.deps.defaultModes()) : undefined;
    const [stored] = await Promise.all([
      this.deps.window(conversation.id, history.messages),
      policy?.refresh(),
    ]);
    const tools = await this.deps.tools({
      threadId: conversation.id,
      resourceId: conversation.ownerId,
      ...(policy ? { policy } : {}),
    });
    // A started run adds its message itself (one stored by an earlier attempt is left out); a
    // resumed run's message is in the window, before the call it waits on.
    const earlier = segment.kind === 'start' ? stored.filter((row) => row.id !== message.id) : stored;
    const messages = toModelMessages(
      earlier,
      segment.kind === 'resume' ? segment.call.toolCallId : undefined,
    );
    if (segment.kind === 'start') {
      messages.push(
        ...toModelMessages([
          {
            id: message.id,
            role: 'user',
            // Images and documents as references to the media route, resolved just before the call.
            content: {
              parts: [
                { type: 'text', text: message.text },
                ...message.attachments.map(storedFileReferencePart),
              ],
            },
          },
        ]),
      );
    }
    return { messages, tools, policy };
  }
}

/** The suspended call as the window has it (a token from the other driver names only its id). */
function callInWindow(messages: readonly ModelMessage[], toolCallId: string) {
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call' && part.toolCallId === toolCallId) {
        return { toolCallId, toolName: part.toolName, args: part.input };
      }
    }
  }
  return undefined;
}

/**
 * A person's decision on the suspended call (H3): approved, the tool runs now (a tool that fails
 * or was switched off since answers with its error); denied, it does not, and the model reads why.
 */
async function decide(
  call: Omit<SuspendedCall, 'resumeToken'>,
  decision: 'approve' | 'deny',
  tools: ToolSet,
  messages: ModelMessage[],
  abortSignal: AbortSignal,
) {
  const { toolCallId, toolName } = call;
  const base = { type: 'tool-result' as const, toolCallId, toolName };
  if (decision === 'deny') {
    return {
      chunk: { type: 'tool-output-denied', toolCallId } as UIMessageChunk,
      result: { ...base, output: deniedOutput(TOOL_DENIED_REASON) },
    };
  }
  try {
    const execute = tools[toolName]?.execute;
    if (!execute) throw new Error(`The tool ${toolName} is not available.`);
    const output = await execute(call.args as never, { toolCallId, messages, abortSignal } as never);
    return {
      chunk: { type: 'tool-output-available', toolCallId, output } as UIMessageChunk,
      result: { ...base, output: resultOutput(output) },
    };
  } catch (error) {
    const errorText = describeError(error);
    return {
      chunk: { type: 'tool-output-error', toolCallId, errorText } as UIMessageChunk,
      result: { ...base, output: { type: 'error-text' as const, value: errorText } },
    };
  }
}

/** An error as a person may read it: its message's first line, never a stack. */
function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.trim() || turnErrorMessages.modelFailed;
}
