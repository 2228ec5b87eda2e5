import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Scripted model servers of our own, each speaking one provider's real wire protocol over real
 * HTTP (OpenAI chat completions, Anthropic Messages, Google's streamGenerateContent), so a test
 * drives the AI SDK package the app really uses for that provider. One script for all three:
 *   - a request that offers tools and whose last user message holds `[[note]]` gets a `save_note`
 *     tool call (text "buy milk"), and the request after the tool ran gets "Saved it.";
 *   - `[[slow]]` streams 400 words, one every 25 ms, so Stop can cut it;
 *   - anything else gets "Hello from <model>.".
 * Every reply reports 25 input and 7 output tokens. It also lists `listed` as its models, both as
 * OpenAI's `GET /v1/models` and as Ollama's `GET /api/tags` (Ollama serves both).
 */

export type WireProtocol = 'openai' | 'anthropic' | 'google';

export interface RecordedCall {
  model: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Whether the request carried a tool's result back to the model. */
  hadToolResult: boolean;
}

export interface ScriptedServer {
  protocol: WireProtocol;
  /** The base URL its provider's client is given. */
  baseUrl: string;
  /** `http://127.0.0.1:<port>`: where an Ollama's own API lives. */
  origin: string;
  /** The model names its model lists answer with. */
  listed: string[];
  /** Answers its model lists with 503 (a server in trouble), still streaming replies. */
  listDown: boolean;
  /** Requests of its model lists, with their headers. */
  listCalls: Array<IncomingMessage['headers']>;
  calls: RecordedCall[];
  /** Streams the server saw closed by the client before the reply was complete. */
  closedEarly: number;
  /** Words written by the last slow reply before it ended or was cut. */
  slowWordsWritten: number;
  /** Answers every request with this HTTP status and body instead (a server in trouble). */
  failWith: { status: number; body: unknown } | undefined;
  close(): Promise<void>;
}

export const USAGE = { input: 25, output: 7 };
export const SLOW_WORDS = 400;
export const NOTE_TEXT = 'buy milk';

type Reply =
  | { kind: 'text'; words: string[]; delayMs: number }
  | { kind: 'tool'; name: string; args: Record<string, unknown> };

/** The parts of a request the script reads, per protocol. */
interface Reading {
  model: string;
  lastUser: string;
  offersTools: boolean;
  hadToolResult: boolean;
}

function scriptFor(reading: Reading): Reply {
  if (reading.hadToolResult) return { kind: 'text', words: ['Saved', ' it.'], delayMs: 0 };
  if (reading.offersTools && reading.lastUser.includes('[[note]]'))
    return { kind: 'tool', name: 'save_note', args: { text: NOTE_TEXT } };
  if (reading.lastUser.includes('[[slow]]'))
    return {
      kind: 'text',
      words: Array.from({ length: SLOW_WORDS }, (_, index) => (index === 0 ? 'word0' : ` word${index}`)),
      delayMs: 25,
    };
  return { kind: 'text', words: ['Hello', ` from ${reading.model}.`], delayMs: 0 };
}

type Body = Record<string, unknown> & {
  messages?: Array<{ role: string; content: unknown }>;
  contents?: Array<{ role: string; parts: unknown[] }>;
  tools?: unknown[];
};

function readingOf(protocol: WireProtocol, body: Body, url: string): Reading {
  const offersTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (protocol === 'google') {
    const contents = body.contents ?? [];
    const last = contents.at(-1);
    const lastUser = [...contents].reverse().find((content) => content.role === 'user');
    return {
      // .../models/<model>:streamGenerateContent
      model: /models\/([^:/?]+)/.exec(url)?.[1] ?? '',
      lastUser: JSON.stringify(lastUser ?? ''),
      offersTools,
      hadToolResult: JSON.stringify(last ?? '').includes('functionResponse'),
    };
  }
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  return {
    model: String(body.model),
    lastUser: JSON.stringify(lastUser ?? ''),
    offersTools,
    hadToolResult:
      protocol === 'openai' ? last?.role === 'tool' : JSON.stringify(last ?? '').includes('"tool_result"'),
  };
}

/** Writes one reply as the protocol's server-sent events, a word at a time. */
async function streamReply(
  protocol: WireProtocol,
  reply: Reply,
  model: string,
  response: ServerResponse,
  isOpen: () => boolean,
  onWord: () => void,
): Promise<void> {
  const data = (payload: unknown) => response.write(`data: ${JSON.stringify(payload)}\n\n`);
  const event = (name: string, payload: unknown) =>
    response.write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  const words = async (write: (word: string) => void) => {
    if (reply.kind !== 'text') return;
    for (const word of reply.words) {
      if (!isOpen()) return;
      write(word);
      onWord();
      if (reply.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    }
  };

  if (protocol === 'openai') {
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model };
    const choice = (delta: unknown, finish: string | null = null) =>
      data({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    choice({ role: 'assistant', content: '' });
    if (reply.kind === 'tool') {
      const args = JSON.stringify(reply.args);
      choice({
        tool_calls: [
          { index: 0, id: 'call_1', type: 'function', function: { name: reply.name, arguments: '' } },
        ],
      });
      // Arguments arrive in pieces, as real servers stream them.
      for (const piece of [args.slice(0, 5), args.slice(5)])
        choice({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
      choice({}, 'tool_calls');
    } else {
      await words((word) => choice({ content: word }));
      if (!isOpen()) return;
      choice({}, 'stop');
    }
    data({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: USAGE.input,
        completion_tokens: USAGE.output,
        total_tokens: USAGE.input + USAGE.output,
      },
    });
    response.end('data: [DONE]\n\n');
    return;
  }

  if (protocol === 'anthropic') {
    event('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: USAGE.input, output_tokens: 1 },
      },
    });
    if (reply.kind === 'tool') {
      event('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: reply.name, input: {} },
      });
      const args = JSON.stringify(reply.args);
      for (const piece of [args.slice(0, 5), args.slice(5)])
        event('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: piece },
        });
    } else {
      event('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      });
      await words((word) =>
        event('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: word },
        }),
      );
      if (!isOpen()) return;
    }
    event('content_block_stop', { type: 'content_block_stop', index: 0 });
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: reply.kind === 'tool' ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: USAGE.output },
    });
    event('message_stop', { type: 'message_stop' });
    response.end();
    return;
  }

  // Google: each event is a whole GenerateContentResponse; the last carries the finish and usage.
  const candidate = (parts: unknown[], finishReason?: string) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
  });
  if (reply.kind === 'tool') data(candidate([{ functionCall: { name: reply.name, args: reply.args } }]));
  else await words((word) => data(candidate([{ text: word }])));
  if (!isOpen()) return;
  data({
    ...candidate([], 'STOP'),
    usageMetadata: {
      promptTokenCount: USAGE.input,
      candidatesTokenCount: USAGE.output,
      totalTokenCount: USAGE.input + USAGE.output,
    },
  });
  response.end();
}

/** Starts a scripted server for `protocol` on a random loopback port. */
export async function startScriptedServer(protocol: WireProtocol): Promise<ScriptedServer> {
  const state: ScriptedServer = {
    protocol,
    baseUrl: '',
    origin: '',
    listed: [],
    listDown: false,
    listCalls: [],
    calls: [],
    closedEarly: 0,
    slowWordsWritten: 0,
    failWith: undefined,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server: Server = createServer((request, response) => {
    if (request.method === 'GET') {
      state.listCalls.push(request.headers);
      const path = request.url ?? '';
      const body =
        path === '/v1/models'
          ? {
              object: 'list',
              data: state.listed.map((id) => ({ id, object: 'model', owned_by: 'scripted' })),
            }
          : path === '/api/tags'
            ? { models: state.listed.map((name) => ({ name, model: name, size: 1 })) }
            : undefined;
      response.writeHead(state.listDown ? 503 : body ? 200 : 404, { 'content-type': 'application/json' });
      response.end(JSON.stringify(state.listDown ? { error: 'loading' } : (body ?? { error: 'not found' })));
      return;
    }
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', () => {
      const body = (raw ? JSON.parse(raw) : {}) as Body;
      const reading = readingOf(protocol, body, request.url ?? '');
      state.calls.push({
        model: reading.model,
        headers: request.headers,
        body,
        hadToolResult: reading.hadToolResult,
      });
      if (state.failWith) {
        response.writeHead(state.failWith.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(state.failWith.body));
        return;
      }
      const reply = scriptFor(reading);
      const slow = reply.kind === 'text' && reply.delayMs > 0;
      if (slow) state.slowWordsWritten = 0;
      let open = true;
      response.on('close', () => {
        if (!response.writableFinished) {
          open = false;
          state.closedEarly += 1;
        }
      });
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      void streamReply(
        protocol,
        reply,
        reading.model,
        response,
        () => open,
        () => {
          if (slow) state.slowWordsWritten += 1;
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // Each provider's client appends its own path to the base URL it is given.
  state.origin = `http://127.0.0.1:${port}`;
  state.baseUrl = `${state.origin}${protocol === 'google' ? '/v1beta' : '/v1'}`;
  return state;
}
