import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { isSummaryCall, type PlannedReply, planReply, planSummary, turnOf } from './localModelReply';
import { planToolStep, type ToolStep } from './localModelTools';

export interface LocalModelOptions {
  defaultDelayMs: number;
}

const MODEL_ID = 'local';

function usageFor(inputTokens: number, outputTokens: number): LanguageModelV4Usage {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}

const STOP: LanguageModelV4FinishReason = { unified: 'stop', raw: 'stop' };
const TOOL_CALLS: LanguageModelV4FinishReason = { unified: 'tool-calls', raw: 'tool_calls' };

/** This call's tool step: ask for a tool, or say what one gave (`[[tool:NAME]]`). */
function toolStepOf(callOptions: LanguageModelV4CallOptions): ToolStep {
  const tools = callOptions.tools ?? [];
  const offered = tools.map((tool) => tool.name);
  // A tool whose input has a `text` string (save_note, an MCP server's tool) is given the message.
  const takesText = tools.flatMap((tool) =>
    tool.type === 'function' && takesTextInput(tool.inputSchema) ? [tool.name] : [],
  );
  return planToolStep(callOptions.prompt, turnOf(callOptions.prompt), offered, takesText);
}

function takesTextInput(schema: unknown): boolean {
  const text = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties?.text;
  return text?.type === 'string';
}

function toolCallOf(step: ToolStep & { kind: 'call' }) {
  return {
    type: 'tool-call' as const,
    toolCallId: `call-${crypto.randomUUID()}`,
    toolName: step.toolName,
    input: JSON.stringify(step.input),
  };
}

function abortErrorFrom(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(typeof reason === 'string' ? reason : 'This operation was aborted', 'AbortError');
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortErrorFrom(signal);
}

function failedOnRequest(): Error {
  return new Error('The local model failed as requested by [[fail]].');
}

function failedAfterWords(words: number): Error {
  return new Error(`The local model failed after ${words} words as requested by [[fail-after:${words}]].`);
}

function startTimer(callback: () => void, waitMs: number): () => void {
  if (waitMs > 0) {
    const timeout = setTimeout(callback, waitMs);
    return () => clearTimeout(timeout);
  }
  const immediate = setImmediate(callback);
  return () => clearImmediate(immediate);
}

// Zero delays still yield to the event loop so an abort can land between words.
function sleepUntil(deadline: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortErrorFrom(signal));
      return;
    }
    const waitMs = deadline - performance.now();
    const done = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const cancelTimer = startTimer(done, waitMs);
    const onAbort = () => {
      cancelTimer();
      reject(abortErrorFrom(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function* streamParts(
  plan: PlannedReply,
  delayMs: number,
  signal: AbortSignal,
): AsyncGenerator<LanguageModelV4StreamPart> {
  const responseId = `local-${crypto.randomUUID()}`;
  const textId = `${responseId}-text`;
  const failAt =
    plan.directives.failAfter === undefined
      ? undefined
      : Math.min(plan.directives.failAfter, plan.words.length);

  yield { type: 'stream-start', warnings: [] };
  yield { type: 'response-metadata', id: responseId, modelId: MODEL_ID, timestamp: new Date() };
  yield { type: 'text-start', id: textId };

  // Every word, the first included, waits its turn (a real model has a time to first token).
  // Deadlines count from the start so timer overshoot does not accumulate over long replies.
  const startedAt = performance.now();
  for (const [index, word] of plan.words.entries()) {
    if (index === failAt) break;
    await sleepUntil(startedAt + (index + 1) * delayMs, signal);
    yield { type: 'text-delta', id: textId, delta: index === 0 || plan.verbatim ? word : ` ${word}` };
  }

  if (failAt !== undefined) {
    yield { type: 'error', error: failedAfterWords(failAt) };
    return;
  }
  yield { type: 'text-end', id: textId };
  yield { type: 'finish', finishReason: STOP, usage: usageFor(plan.inputTokens, plan.outputTokens) };
}

/** A model step that only calls a tool (after one word's delay, like a model thinking). */
async function* toolCallParts(
  step: ToolStep & { kind: 'call' },
  inputTokens: number,
  delayMs: number,
  signal: AbortSignal,
): AsyncGenerator<LanguageModelV4StreamPart> {
  yield { type: 'stream-start', warnings: [] };
  yield {
    type: 'response-metadata',
    id: `local-${crypto.randomUUID()}`,
    modelId: MODEL_ID,
    timestamp: new Date(),
  };
  await sleepUntil(performance.now() + delayMs, signal);
  yield toolCallOf(step);
  yield { type: 'finish', finishReason: TOOL_CALLS, usage: usageFor(inputTokens, 1) };
}

function partsToStream(
  parts: AsyncGenerator<LanguageModelV4StreamPart>,
  callerSignal: AbortSignal | undefined,
  stopProducing: () => void,
): ReadableStream<LanguageModelV4StreamPart> {
  let onCallerAbort: (() => void) | undefined;
  const detach = () => {
    if (onCallerAbort) callerSignal?.removeEventListener('abort', onCallerAbort);
  };

  return new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      if (!callerSignal) return;
      // Error at once, like a fetch body, instead of waiting for the consumer's next read.
      onCallerAbort = () => {
        stopProducing();
        controller.error(abortErrorFrom(callerSignal));
      };
      callerSignal.addEventListener('abort', onCallerAbort, { once: true });
    },
    async pull(controller) {
      try {
        const next = await parts.next();
        if (next.done) {
          detach();
          controller.close();
        } else {
          controller.enqueue(next.value);
        }
      } catch (error) {
        detach();
        controller.error(error);
      }
    },
    async cancel() {
      detach();
      stopProducing();
      await parts.return(undefined);
    },
  });
}

/** A whole reply at once (`doGenerate`), with its usage counted like the meter's. */
function generated(plan: PlannedReply): LanguageModelV4GenerateResult {
  return {
    content: [{ type: 'text', text: plan.words.join(plan.verbatim ? '' : ' ') }],
    finishReason: STOP,
    usage: usageFor(plan.inputTokens, plan.outputTokens),
    response: { id: `local-${crypto.randomUUID()}`, modelId: MODEL_ID, timestamp: new Date() },
    warnings: [],
  };
}

export function createLocalModel(options: LocalModelOptions): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'local',
    modelId: MODEL_ID,
    supportedUrls: {},

    async doGenerate(callOptions: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      throwIfAborted(callOptions.abortSignal);
      // A compaction's summary (C3): its one message quotes the chat, directives included.
      if (isSummaryCall(callOptions.prompt)) return generated(planSummary(callOptions.prompt));
      const step = toolStepOf(callOptions);
      if (step.kind === 'call') {
        return {
          content: [toolCallOf(step)],
          finishReason: TOOL_CALLS,
          usage: usageFor(0, 1),
          response: { id: `local-${crypto.randomUUID()}`, modelId: MODEL_ID, timestamp: new Date() },
          warnings: [],
        };
      }
      const plan = planReply(callOptions.prompt, step.kind === 'say' ? step.sentence : undefined);
      if (plan.directives.fail) throw failedOnRequest();
      if (plan.directives.failAfter !== undefined) {
        throw failedAfterWords(Math.min(plan.directives.failAfter, plan.words.length));
      }
      return generated(plan);
    },

    async doStream(callOptions: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
      throwIfAborted(callOptions.abortSignal);
      const summary = isSummaryCall(callOptions.prompt);
      const step: ToolStep = summary ? { kind: 'none' } : toolStepOf(callOptions);
      const plan = summary
        ? planSummary(callOptions.prompt)
        : planReply(callOptions.prompt, step.kind === 'say' ? step.sentence : undefined);
      if (plan.directives.fail) throw failedOnRequest();

      const production = new AbortController();
      const signal = callOptions.abortSignal
        ? AbortSignal.any([callOptions.abortSignal, production.signal])
        : production.signal;
      const delayMs = plan.directives.delayMs ?? options.defaultDelayMs;
      const parts =
        step.kind === 'call'
          ? toolCallParts(step, plan.inputTokens, delayMs, signal)
          : streamParts(plan, delayMs, signal);
      return { stream: partsToStream(parts, callOptions.abortSignal, () => production.abort()) };
    },
  };
}
