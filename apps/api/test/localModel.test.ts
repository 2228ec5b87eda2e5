import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { Agent } from '@mastra/core/agent';
import { generateText, type ModelMessage, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { HANDOFF_INSTRUCTION, isHandoffInstruction } from '../src/agent/handoffInstruction';
import { createLocalModel } from '../src/agent/localModel';
import { parseDirectives } from '../src/agent/localModelDirectives';
import { LOCAL_MODEL_ENCODING } from '../src/agent/localModelReply';
import { resolveChatModel } from '../src/agent/models';
import { countTextTokens, MESSAGE_OVERHEAD_TOKENS } from '../src/agent/tokenCount';

process.env.MASTRA_TELEMETRY_DISABLED = '1';

const fastModel = () => createLocalModel({ defaultDelayMs: 0 });

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

interface Collected {
  text: string;
  deltas: string[];
  errors: unknown[];
  partTypes: string[];
}

async function collect(result: { fullStream: AsyncIterable<{ type: string }> }): Promise<Collected> {
  const collected: Collected = { text: '', deltas: [], errors: [], partTypes: [] };
  for await (const part of result.fullStream) {
    collected.partTypes.push(part.type);
    if (part.type === 'text-delta' && 'text' in part && typeof part.text === 'string') {
      collected.deltas.push(part.text);
      collected.text += part.text;
    }
    if (part.type === 'error' && 'error' in part) collected.errors.push(part.error);
  }
  return collected;
}

async function readModelStream(model: LanguageModelV4, text: string, abortSignal?: AbortSignal) {
  const { stream } = await model.doStream({
    prompt: [{ role: 'user', content: [{ type: 'text', text }] }],
    abortSignal,
  });
  const parts: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

describe('parseDirectives', () => {
  it('reads every directive and removes it from the text', () => {
    expect(
      parseDirectives(
        'Hi [[words:5]] there [[delay:20]]\n[[fail-after:2]] [[tool:search]] [[history]] [[markdown]] [[steps:3]]',
      ),
    ).toEqual({
      words: 5,
      delayMs: 20,
      fail: false,
      failAfter: 2,
      tool: 'search',
      steps: 3,
      history: true,
      markdown: true,
      failSummary: false,
      cleanText: 'Hi there',
    });
  });

  it('uses defaults, clamps values and keeps unknown tokens', () => {
    expect(parseDirectives('plain')).toEqual({
      words: 40,
      delayMs: undefined,
      fail: false,
      failAfter: undefined,
      tool: undefined,
      steps: 0,
      history: false,
      markdown: false,
      failSummary: false,
      cleanText: 'plain',
    });
    const clamped = parseDirectives('[[words:0]] [[delay:999999]] keep [[mystery]] and [[words:x]] [[fail]]');
    expect(clamped.words).toBe(1);
    expect(clamped.delayMs).toBe(60000);
    expect(clamped.fail).toBe(true);
    expect(clamped.cleanText).toBe('keep [[mystery]] and [[words:x]]');
    expect(parseDirectives('[[words:123456]]').words).toBe(20000);
  });
});

describe('local model through streamText', () => {
  it('replies with 40 words by default and finishes with stop', async () => {
    const result = streamText({ model: fastModel(), prompt: 'Tell me about queues' });
    const { text, deltas } = await collect(result);
    expect(wordsOf(text)).toHaveLength(40);
    expect(deltas).toHaveLength(40);
    expect(await result.finishReason).toBe('stop');
    // Counted like the context meter: the reply's text, and the prompt message with its overhead.
    expect((await result.usage).outputTokens).toBe(countTextTokens(text, LOCAL_MODEL_ENCODING));
    expect((await result.usage).inputTokens).toBe(
      MESSAGE_OVERHEAD_TOKENS + countTextTokens('Tell me about queues', LOCAL_MODEL_ENCODING),
    );
  });

  it('replies with exactly [[words:N]] words, cutting the quote when needed', async () => {
    const five = await collect(streamText({ model: fastModel(), prompt: 'Hi there [[words:5]]' }));
    expect(wordsOf(five.text)).toHaveLength(5);
    expect(five.text.startsWith('You said: "Hi there". ')).toBe(true);

    const two = await collect(streamText({ model: fastModel(), prompt: 'Hi there [[words:2]]' }));
    expect(two.text).toBe('You said:');
  });

  it('quotes the last user message without directives', async () => {
    const { text } = await collect(
      streamText({
        model: fastModel(),
        prompt: 'Please explain [[delay:0]] backpressure [[words:12]] [[odd]]',
      }),
    );
    expect(text.startsWith('You said: "Please explain backpressure [[odd]]". ')).toBe(true);
    expect(wordsOf(text)).toHaveLength(12);
  });

  it('truncates a long quote with an ellipsis', async () => {
    const longMessage = Array.from({ length: 80 }, (_, index) => `word${index}`).join(' ');
    const { text } = await collect(
      streamText({ model: fastModel(), prompt: `${longMessage} [[words:100]]` }),
    );
    const quote = text.slice('You said: "'.length, text.indexOf('". '));
    expect(quote.endsWith('…')).toBe(true);
    expect(quote.length).toBeLessThanOrEqual(201);
    expect(longMessage.startsWith(quote.slice(0, -1))).toBe(true);
  });

  it('is deterministic for the same input and varies with the message', async () => {
    const first = await collect(streamText({ model: fastModel(), prompt: 'Same input [[words:30]]' }));
    const second = await collect(streamText({ model: fastModel(), prompt: 'Same input [[words:30]]' }));
    const other = await collect(streamText({ model: fastModel(), prompt: 'Other input [[words:30]]' }));
    expect(second.text).toBe(first.text);
    expect(wordsOf(other.text).slice(4)).not.toEqual(wordsOf(first.text).slice(4));
    expect(first.text.endsWith('.')).toBe(true);
  });

  it('paces words by [[delay:MS]]', async () => {
    const startedAt = performance.now();
    const { deltas } = await collect(
      streamText({ model: fastModel(), prompt: 'Go [[words:10]] [[delay:20]]' }),
    );
    const elapsed = performance.now() - startedAt;
    expect(deltas).toHaveLength(10);
    expect(elapsed).toBeGreaterThanOrEqual(150);
  });

  it('uses the default delay when no directive is given', async () => {
    const slowModel = createLocalModel({ defaultDelayMs: 25 });
    const startedAt = performance.now();
    await collect(streamText({ model: slowModel, prompt: 'Go [[words:6]]' }));
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(100);
  });

  it('stops early when aborted mid-stream', async () => {
    const controller = new AbortController();
    let abortedOnDelta: number | undefined;
    let deltasAfterAbort = 0;
    let deltaCount = 0;
    const result = streamText({
      model: fastModel(),
      prompt: 'Long one [[words:200]] [[delay:10]]',
      abortSignal: controller.signal,
    });
    const { deltas, partTypes } = await collect({
      fullStream: (async function* () {
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') {
            if (abortedOnDelta !== undefined) deltasAfterAbort++;
            else if (part.text.trim() && ++deltaCount === 5) {
              abortedOnDelta = deltaCount;
              controller.abort();
            }
          }
          yield part;
        }
      })(),
    });
    expect(abortedOnDelta).toBe(5);
    expect(deltas).toHaveLength(5);
    expect(deltasAfterAbort).toBe(0);
    expect(partTypes.at(-1)).toBe('abort');
    expect(partTypes).not.toContain('finish');
  });

  it('fails before any text with [[fail]]', async () => {
    const { text, errors, partTypes } = await collect(
      streamText({ model: fastModel(), prompt: 'Break [[fail]]', onError: () => {} }),
    );
    expect(text).toBe('');
    expect(partTypes).not.toContain('text-delta');
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('The local model failed as requested by [[fail]].');
  });

  it('fails after N words with [[fail-after:N]]', async () => {
    const result = streamText({
      model: fastModel(),
      prompt: 'one two three four [[fail-after:3]]',
      onError: () => {},
    });
    const { text, deltas, errors } = await collect(result);
    expect(deltas).toEqual(['You', ' said:', ' "one']);
    expect(text).toBe('You said: "one');
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe(
      'The local model failed after 3 words as requested by [[fail-after:3]].',
    );
    expect(await result.finishReason).toBe('error');
  });

  it('opens with (after interruption) only when the handoff instruction is present', async () => {
    const withHandoff = await collect(
      streamText({
        model: fastModel(),
        system: HANDOFF_INSTRUCTION,
        prompt: 'Actually, use Rust [[words:9]]',
      }),
    );
    expect(withHandoff.text.startsWith('(after interruption) You said: "Actually, use Rust". ')).toBe(true);
    expect(wordsOf(withHandoff.text)).toHaveLength(9);

    const withoutHandoff = await collect(
      streamText({ model: fastModel(), system: 'Be helpful.', prompt: 'Actually, use Rust [[words:9]]' }),
    );
    expect(withoutHandoff.text.startsWith('You said: "Actually, use Rust". ')).toBe(true);
  });

  it('lists earlier user messages with [[history]]', async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: 'first question [[words:3]]' },
      { role: 'assistant', content: 'an answer' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'another answer' },
      { role: 'user', content: 'third [[history]] [[words:3]]' },
    ];
    const { text } = await collect(streamText({ model: fastModel(), messages }));
    expect(text).toBe('History: "first question" | "second question" You said: "third".');

    const alone = await collect(streamText({ model: fastModel(), prompt: 'only [[history]] [[words:8]]' }));
    expect(wordsOf(alone.text).slice(0, 5).join(' ')).toBe('History: (none) You said: "only".');
    expect(wordsOf(alone.text)).toHaveLength(8);
  });

  it('replies with a Markdown sample in many pieces with [[markdown]]', async () => {
    const reply = await collect(
      streamText({ model: fastModel(), prompt: 'Show me [[markdown]] [[words:3]]' }),
    );
    expect(reply.text.startsWith('You said: "Show me".\n\n## ')).toBe(true);
    expect(reply.text).toMatch(/^- .+$/m);
    expect(reply.text).toMatch(/^```ts\nfunction greet[\s\S]+\n```$/m);
    expect(reply.text).toMatch(/^\| --- \| --- \|$/m);
    expect(reply.text).toMatch(/\[links\]\(https:\/\/[^)]+\)/);
    expect(reply.text).toMatch(/`inline code`/);
    // Streamed like any reply: piece by piece, not in one chunk ([[words]] does not cut it).
    expect(reply.deltas.length).toBeGreaterThan(50);

    const generated = await generateText({ model: fastModel(), prompt: 'Show me [[markdown]]' });
    expect(generated.text).toBe(
      (await collect(streamText({ model: fastModel(), prompt: 'Show me [[markdown]]' }))).text,
    );
  });

  it('generates the same text at once through doGenerate', async () => {
    const streamed = await collect(streamText({ model: fastModel(), prompt: 'Same again [[words:25]]' }));
    const generated = await generateText({
      model: createLocalModel({ defaultDelayMs: 1000 }),
      prompt: 'Same again [[words:25]]',
    });
    expect(generated.text).toBe(streamed.text);
    expect(generated.finishReason).toBe('stop');
  });
});

describe('local model stream contract', () => {
  it('emits stream-start, text parts and a finish with usage', async () => {
    const parts = await readModelStream(fastModel(), 'Hey [[words:3]]');
    expect(parts.map((part) => part.type)).toEqual([
      'stream-start',
      'response-metadata',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'finish',
    ]);
    const text = parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
    const input = MESSAGE_OVERHEAD_TOKENS + countTextTokens('Hey [[words:3]]', LOCAL_MODEL_ENCODING);
    const output = countTextTokens(text, LOCAL_MODEL_ENCODING);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: output, text: output, reasoning: 0 },
      },
    });
  });

  it('errors the stream with an AbortError when aborted, and rejects when already aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const error = await readModelStream(
      fastModel(),
      'Slow [[words:100]] [[delay:10]]',
      controller.signal,
    ).catch((caught: unknown) => caught);
    expect((error as Error).name).toBe('AbortError');

    await expect(readModelStream(fastModel(), 'Too late', AbortSignal.abort())).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('delivers nothing more once aborted, even parts already produced', async () => {
    const controller = new AbortController();
    const { stream } = await fastModel().doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Fast [[words:1000]] [[delay:0]]' }] }],
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('clears its pending timer when aborted', async () => {
    const pendingTimeouts = () =>
      process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = pendingTimeouts();
    const controller = new AbortController();
    const { stream } = await fastModel().doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Slow [[words:5]] [[delay:60000]]' }] }],
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    const types: string[] = [];
    while (!types.includes('text-start')) types.push((await reader.read()).value?.type ?? 'done');
    // Every word waits its delay, the first one included.
    const waitingForFirstWord = reader.read();
    await new Promise((resolve) => setImmediate(resolve));
    expect(pendingTimeouts()).toBe(before + 1);
    controller.abort();
    await expect(waitingForFirstWord).rejects.toMatchObject({ name: 'AbortError' });
    expect(pendingTimeouts()).toBe(before);
  });

  it('rejects doStream itself with [[fail]]', async () => {
    await expect(readModelStream(fastModel(), 'x [[fail]]')).rejects.toThrow(
      'The local model failed as requested by [[fail]].',
    );
  });
});

describe('handoff instruction', () => {
  it('is recognised by its first line, also inside a merged system prompt', () => {
    expect(HANDOFF_INSTRUCTION.split('\n')[0]).toBe('Interrupt handoff:');
    expect(isHandoffInstruction(HANDOFF_INSTRUCTION)).toBe(true);
    expect(isHandoffInstruction(`You are helpful.\n\n${HANDOFF_INSTRUCTION}`)).toBe(true);
    expect(isHandoffInstruction('You are helpful.')).toBe(false);
  });
});

describe('local model through a Mastra Agent', () => {
  it('streams the reply', async () => {
    const agent = new Agent({ id: 't', name: 't', instructions: 'x', model: fastModel() });
    const result = await agent.stream('hello [[words:7]]');
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;
    expect(wordsOf(streamed)).toHaveLength(7);
    expect(streamed.startsWith('You said: "hello". ')).toBe(true);
    expect(await result.text).toBe(streamed);
  });
});

describe('resolveChatModel', () => {
  it('builds the local model or an OpenAI-compatible chat model, and rejects bad config', () => {
    const local = resolveChatModel({ chatModel: 'local', localModelDelayMs: 30 });
    expect([local.provider, local.modelId]).toEqual(['local', 'local']);

    const compatible = resolveChatModel({
      chatModel: 'openai:llama3.2',
      openaiBaseUrl: 'http://127.0.0.1:11434/v1',
      localModelDelayMs: 30,
    });
    expect([compatible.provider, compatible.modelId]).toEqual(['openai.chat', 'llama3.2']);

    expect(() => resolveChatModel({ chatModel: 'openai:gpt-4o-mini', localModelDelayMs: 30 })).toThrow(
      /needs OPENAI_API_KEY/,
    );
    expect(() => resolveChatModel({ chatModel: 'anthropic:claude', localModelDelayMs: 30 })).toThrow(
      /Unknown CHAT_MODEL/,
    );
  });
});
