import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { jsonSchema, stepCountIs, streamText, type ToolSet, tool, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { partsOf, uiChunkOf } from '../src/chats/turns/driver/aiSdk/uiChunks';

/**
 * The AI SDK driver makes the UI message chunks of a run itself (`uiChunks.ts`, ADR-058) instead
 * of reading `toUIMessageStream`: here both read the same model output, a step at a time as a
 * model streams it, and what they make must be equal, chunk for chunk and byte for byte (the SSE
 * frames are these objects' JSON): text, reasoning, sources and files, tool input streamed, tool
 * results and failures, a call of a tool that does not exist, an approval request, a model's
 * error part, a model call that throws, Stop mid-reply, and a resumed reply (no `start`).
 */

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

type Step = LanguageModelV4StreamPart[] | { throws: Error };

/** A model that streams the given steps, one per call, each part on a turn of its own. */
function scriptedModel(steps: Step[]): LanguageModelV4 {
  let call = 0;
  return {
    specificationVersion: 'v4',
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate() {
      throw new Error('streams only');
    },
    async doStream(options) {
      const step = steps[Math.min(call, steps.length - 1)] as Step;
      call += 1;
      if ('throws' in step) throw step.throws;
      let index = 0;
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          async pull(controller) {
            await new Promise((resolve) => setImmediate(resolve));
            if (options.abortSignal?.aborted) {
              controller.error(options.abortSignal.reason);
              return;
            }
            const part = step[index];
            index += 1;
            if (part) controller.enqueue(part);
            else controller.close();
          },
        }),
      };
    },
  } as LanguageModelV4;
}

const open = (id = 'r1'): LanguageModelV4StreamPart[] => [
  { type: 'stream-start', warnings: [] },
  { type: 'response-metadata', id, modelId: 'scripted', timestamp: new Date(0) },
];
const finish = (unified: 'stop' | 'tool-calls' = 'stop'): LanguageModelV4StreamPart => ({
  type: 'finish',
  finishReason: { unified, raw: unified },
  usage,
});
const text = (id: string, ...words: string[]): LanguageModelV4StreamPart[] => [
  { type: 'text-start', id },
  ...words.map((delta): LanguageModelV4StreamPart => ({ type: 'text-delta', id, delta })),
  { type: 'text-end', id },
];
const callOf = (toolCallId: string, toolName: string, input: unknown): LanguageModelV4StreamPart[] => [
  { type: 'tool-input-start', id: toolCallId, toolName },
  { type: 'tool-input-delta', id: toolCallId, delta: JSON.stringify(input) },
  { type: 'tool-input-end', id: toolCallId },
  { type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) },
];

const tools: ToolSet = {
  current_time: tool({
    description: 'The time.',
    inputSchema: jsonSchema<{ zone?: string }>({ type: 'object', properties: { zone: { type: 'string' } } }),
    execute: async () => ({ time: '12:00' }),
  }),
  broken: tool({
    description: 'Fails.',
    inputSchema: jsonSchema<{ reason?: string }>({ type: 'object', properties: {} }),
    execute: async (): Promise<string> => {
      throw new Error('the tool broke\nwith a second line');
    },
  }),
  save_note: tool({
    description: 'Waits for a person.',
    inputSchema: jsonSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } } }),
    execute: async () => 'saved',
  }),
};

interface Case {
  name: string;
  steps: Step[];
  sendStart?: boolean;
  /** Stop after this many chunks. */
  stopAfter?: number;
}

const cases: Case[] = [
  {
    name: 'text, reasoning with metadata, a source and a file',
    steps: [
      [
        ...open(),
        { type: 'reasoning-start', id: 'k1', providerMetadata: { scripted: { signature: 's' } } },
        { type: 'reasoning-delta', id: 'k1', delta: 'thinking' },
        { type: 'reasoning-end', id: 'k1' },
        { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com/', title: 'Example' },
        { type: 'file', mediaType: 'text/plain', data: { type: 'data', data: 'aGk=' } },
        { type: 'text-start', id: 't1', providerMetadata: { scripted: { n: 1 } } },
        { type: 'text-delta', id: 't1', delta: 'Hello' },
        { type: 'text-delta', id: 't1', delta: ' there' },
        { type: 'text-end', id: 't1' },
        finish(),
      ],
    ],
  },
  {
    name: 'a tool call streamed, its result, then the answer',
    steps: [
      [...open(), ...callOf('c1', 'current_time', { zone: 'UTC' }), finish('tool-calls')],
      [...open('r2'), ...text('t2', 'It', ' is', ' noon.'), finish()],
    ],
  },
  {
    name: 'a tool that fails, a tool that does not exist',
    steps: [
      [...open(), ...callOf('c1', 'broken', {}), ...callOf('c2', 'no_such_tool', {}), finish('tool-calls')],
      [...open('r2'), ...text('t2', 'Sorry.'), finish()],
    ],
  },
  {
    name: 'a call that waits for a person',
    steps: [
      [...open(), ...text('t1', 'Saving'), ...callOf('c1', 'save_note', { text: 'x' }), finish('tool-calls')],
    ],
  },
  {
    name: "the model's error part",
    steps: [
      [...open(), ...text('t1', 'Half'), { type: 'error', error: new Error('overloaded\nstack') }, finish()],
    ],
  },
  { name: 'a model call that throws', steps: [{ throws: new Error('the provider is down') }] },
  {
    name: 'a resumed reply: no start of its own',
    sendStart: false,
    steps: [[...open(), ...text('t1', 'Going', ' on.'), finish()]],
  },
  {
    name: 'Stop mid-reply',
    stopAfter: 5,
    steps: [[...open(), ...text('t1', 'one', ' two', ' three', ' four', ' five', ' six'), finish()]],
  },
];

function describeError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/** One run of the case; `read` turns it into UI chunks. */
async function run(
  testCase: Case,
  read: (result: ReturnType<typeof streamText>, stop: () => void) => Promise<UIMessageChunk[]>,
) {
  let id = 0;
  const next = (prefix: string) => {
    id += 1;
    return `${prefix}-${id}`;
  };
  const controller = new AbortController();
  const result = streamText({
    model: scriptedModel(testCase.steps),
    prompt: 'hi',
    tools,
    stopWhen: stepCountIs(5),
    abortSignal: controller.signal,
    maxRetries: 0,
    onError: () => {},
    toolApproval: async ({ toolCall }) =>
      toolCall.toolName === 'save_note' ? 'user-approval' : 'not-applicable',
    _internal: {
      generateId: () => next('id'),
      generateCallId: () => next('call'),
      now: () => 0,
    },
  });
  return await read(result, () => controller.abort());
}

const errorsSeen = (errors: unknown[]) => (error: unknown) => {
  errors.push(error);
  return describeError(error);
};

async function collect(
  chunks: AsyncIterable<UIMessageChunk> | (() => Promise<UIMessageChunk | undefined | null>),
  stopAfter: number | undefined,
  stop: () => void,
) {
  const seen: UIMessageChunk[] = [];
  const take = (chunk: UIMessageChunk) => {
    seen.push(chunk);
    if (seen.length === stopAfter) stop();
  };
  if (typeof chunks === 'function') {
    for (let chunk = await chunks(); chunk !== null; chunk = await chunks()) if (chunk) take(chunk);
  } else {
    for await (const chunk of chunks) take(chunk);
  }
  return seen;
}

describe("the AI SDK driver's UI chunks", () => {
  for (const testCase of cases) {
    it(`equal toUIMessageStream's: ${testCase.name}`, async () => {
      const sendStart = testCase.sendStart ?? true;
      const sdkErrors: unknown[] = [];
      const ours: unknown[] = [];
      const expected = await run(testCase, (result, stop) =>
        collect(
          result.toUIMessageStream({
            sendStart,
            generateMessageId: () => 'message-1',
            onError: errorsSeen(sdkErrors),
          }) as AsyncIterable<UIMessageChunk>,
          testCase.stopAfter,
          stop,
        ),
      );
      const actual = await run(testCase, (result, stop) => {
        const { reader: parts, partOf, direct } = partsOf(result);
        // The result's own stream, not fullStream's copy (an upgrade of `ai` that changes it shows here).
        expect(direct).toBe(true);
        const options = { tools, sendStart, messageId: 'message-1', onError: errorsSeen(ours) };
        return collect(
          async () => {
            const read = await parts.read();
            return read.done ? null : uiChunkOf(partOf(read.value), options);
          },
          testCase.stopAfter,
          stop,
        );
      });
      expect(expected.length).toBeGreaterThan(1);
      expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
      expect(ours.map(describeError)).toEqual(sdkErrors.map(describeError));
    });
  }
});
