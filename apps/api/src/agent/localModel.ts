import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { isHandoffInstruction } from './handoffInstruction';
import { type LocalModelDirectives, parseDirectives } from './localModelDirectives';

export interface LocalModelOptions {
  defaultDelayMs: number;
}

const MODEL_ID = 'local';
const QUOTE_MAX_CHARS = 200;
const HANDOFF_OPENING = '(after interruption)';

// Whole sentences (about 12 words each) keep the filler readable in the UI and in transcripts.
const FILLER_SENTENCES = [
  'The answer depends on a few simple ideas that fit together well.',
  'First we look at what you asked and then at how the parts connect.',
  'In practice most questions like this have clear tradeoffs worth naming early.',
  'A small example often helps because it shows where the details matter.',
  'It is useful to keep notes short, honest and easy to check later.',
  'When things change, the same steps still work with only minor adjustments.',
  'One good approach is to start simple and add detail only when needed.',
  'Each choice has a cost, so it pays to write the reasons down.',
  'Testing the idea on real data usually settles the question faster than debate.',
  'If something feels unclear, asking one precise question saves a lot of time.',
  'The next step builds on this one, so it is worth getting right.',
  'Good defaults matter more than clever options that few people ever use.',
  'A clear name for each part makes the whole system easier to follow.',
  'Most problems become smaller once you split them into independent pieces.',
  'Keep the common case fast and make the rare case merely correct.',
  'Writing the plan down first tends to reveal the gaps in it.',
];

interface PlannedReply {
  words: string[];
  directives: LocalModelDirectives;
  inputTokens: number;
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function textOf(message: LanguageModelV4Message): string {
  if (message.role === 'system') return message.content;
  const texts: string[] = [];
  for (const part of message.content) {
    if (part.type === 'text') texts.push(part.text);
  }
  return texts.join('\n');
}

function truncateQuote(text: string): string {
  if (text.length <= QUOTE_MAX_CHARS) return text;
  const cut = text.slice(0, QUOTE_MAX_CHARS);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > QUOTE_MAX_CHARS / 2 ? cut.slice(0, lastSpace) : cut).trimEnd()}…`;
}

// FNV-1a: a tiny stable hash so the same message always gets the same filler.
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

// mulberry32: deterministic pseudo-random numbers in [0, 1) from a 32-bit seed.
function createRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

function fillerWords(count: number, seed: number): string[] {
  const random = createRandom(seed);
  const words: string[] = [];
  while (words.length < count) {
    const sentence = FILLER_SENTENCES[Math.floor(random() * FILLER_SENTENCES.length)] ?? '';
    words.push(...sentence.split(' '));
  }
  const kept = words.slice(0, count);
  const lastWord = kept.at(-1);
  if (lastWord !== undefined && !lastWord.endsWith('.')) {
    kept[kept.length - 1] = `${lastWord.replace(/[,;:]$/, '')}.`;
  }
  return kept;
}

function planReply(prompt: LanguageModelV4Prompt): PlannedReply {
  const userTexts = prompt.filter((message) => message.role === 'user').map(textOf);
  const directives = parseDirectives(userTexts.at(-1) ?? '');
  const afterInterruption = prompt.some(
    (message) => message.role === 'system' && isHandoffInstruction(message.content),
  );

  const opening: string[] = [];
  if (afterInterruption) opening.push(HANDOFF_OPENING);
  if (directives.history) {
    const earlier = userTexts
      .slice(0, -1)
      .map((text) => `"${truncateQuote(parseDirectives(text).cleanText)}"`);
    opening.push(`History: ${earlier.length > 0 ? earlier.join(' | ') : '(none)'}`);
  }
  opening.push(`You said: "${truncateQuote(directives.cleanText)}".`);
  const openingWords = opening.join(' ').split(/\s+/).filter(Boolean);

  // With [[history]] the whole opening is the evidence a test reads, so it is never cut.
  const words =
    !directives.history && openingWords.length >= directives.words
      ? openingWords.slice(0, directives.words)
      : [
          ...openingWords,
          ...fillerWords(Math.max(0, directives.words - openingWords.length), hashText(directives.cleanText)),
        ];

  const inputTokens = prompt.reduce((total, message) => total + countWords(textOf(message)), 0);
  return { words, directives, inputTokens };
}

function usageFor(inputTokens: number, outputTokens: number): LanguageModelV4Usage {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}

const STOP: LanguageModelV4FinishReason = { unified: 'stop', raw: 'stop' };

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
    yield { type: 'text-delta', id: textId, delta: index === 0 ? word : ` ${word}` };
  }

  if (failAt !== undefined) {
    yield { type: 'error', error: failedAfterWords(failAt) };
    return;
  }
  yield { type: 'text-end', id: textId };
  yield { type: 'finish', finishReason: STOP, usage: usageFor(plan.inputTokens, plan.words.length) };
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

export function createLocalModel(options: LocalModelOptions): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'local',
    modelId: MODEL_ID,
    supportedUrls: {},

    async doGenerate(callOptions: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
      throwIfAborted(callOptions.abortSignal);
      const plan = planReply(callOptions.prompt);
      if (plan.directives.fail) throw failedOnRequest();
      if (plan.directives.failAfter !== undefined) {
        throw failedAfterWords(Math.min(plan.directives.failAfter, plan.words.length));
      }
      return {
        content: [{ type: 'text', text: plan.words.join(' ') }],
        finishReason: STOP,
        usage: usageFor(plan.inputTokens, plan.words.length),
        response: { id: `local-${crypto.randomUUID()}`, modelId: MODEL_ID, timestamp: new Date() },
        warnings: [],
      };
    },

    async doStream(callOptions: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
      throwIfAborted(callOptions.abortSignal);
      const plan = planReply(callOptions.prompt);
      if (plan.directives.fail) throw failedOnRequest();

      const production = new AbortController();
      const signal = callOptions.abortSignal
        ? AbortSignal.any([callOptions.abortSignal, production.signal])
        : production.signal;
      const delayMs = plan.directives.delayMs ?? options.defaultDelayMs;
      const parts = streamParts(plan, delayMs, signal);
      return { stream: partsToStream(parts, callOptions.abortSignal, () => production.abort()) };
    },
  };
}
