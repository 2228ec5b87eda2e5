import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted Anthropic Messages API of our own, over real HTTP with real SSE, for the Claude Code
 * binary to talk to (`ANTHROPIC_BASE_URL`): tests drive the real agent, never a mock of its SDK.
 * The reply is read from the request, with the local model's directives in the last user text:
 *   - `[[words:N]]` N words (default 12), `[[delay:MS]]` between words (default 5);
 *   - `[[fail]]` answers 500 before any text (a model call that fails);
 *   - `[[tool:NAME]]` calls tool NAME first (`Bash`, `Read`, ...) with a harmless input;
 *   - `[[steps:N]]` calls `Bash` (`echo step k`) N times, the words delay between calls;
 *   - `[[history]]` answers with the user texts of the conversation so far;
 *   - `[[usage:N]]` reports N input tokens for the calls answering it (a full window: the agent
 *     compacts its conversation before its next call).
 * A reminder after the prompt naming an approved call (`Approved call: {"name","input"}`, what the
 * driver tells a session resumed after a restart) makes the model make that call again, once.
 * The reply text quotes the user text: `You said: "<text>". word word ...`. A steer the agent took
 * in after a tool result (the product's steer reminder, as a hook's context) makes the
 * continuation open with `(steered) You added: "<steer>".`; a steer reminder or the interrupt
 * handoff in the prompt's own hidden text opens the reply with `(steered)` or
 * `(after interruption)`, as the local model does.
 */

export interface MessagesCall {
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  /** Whether the client closed the stream before the reply was complete. */
  closedEarly: boolean;
}

export interface MessagesApiServer {
  baseUrl: string;
  calls: MessagesCall[];
  close(): Promise<void>;
}

export const MESSAGES_USAGE = { input: 31, output: 9 };

/** A steer as the product's steer reminder quotes it (agent/steerReminder.ts). */
const STEER_TEXT = /<steer>([\s\S]*?)<\/steer>/g;

interface Block {
  type: string;
  text?: string;
  content?: unknown;
}
interface Message {
  /** The binary sends a hook's context as a `system` message among the others. */
  role: 'user' | 'assistant' | 'system';
  content: string | Block[];
}

const directive = (text: string, name: string) => {
  const match = new RegExp(`\\[\\[${name}:(\\d+)\\]\\]`).exec(text);
  return match ? Number(match[1]) : undefined;
};
const withoutDirectives = (text: string) =>
  text
    .replace(/\[\[[^\]]*\]\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

/** Every text in a content (tool results' texts included), as the model reads it. */
function textsOf(content: Message['content']): string[] {
  if (typeof content === 'string') return [content];
  return content.flatMap((block) => {
    if (block.type === 'text' && typeof block.text === 'string') return [block.text];
    if (block.type === 'tool_result') {
      if (typeof block.content === 'string') return [block.content];
      if (Array.isArray(block.content)) return textsOf(block.content as Block[]);
    }
    return [];
  });
}

/** A user text the person wrote (not a tool result, not a reminder the agent added). */
function personTexts(message: Message): string[] {
  if (message.role !== 'user') return [];
  const blocks =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  return blocks
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .filter((text) => !text.startsWith('<system-reminder>') && !text.startsWith('<'));
}

type Plan =
  | { kind: 'fail' }
  | { kind: 'tool'; name: string; input: Record<string, unknown>; preface: string; delayMs: number }
  | { kind: 'text'; words: string[]; delayMs: number };

function planOf(body: Record<string, unknown>): Plan {
  const messages = (body.messages as Message[] | undefined) ?? [];
  // The turn's prompt: the last text the person wrote; what came after it is this turn's work.
  let promptIndex = -1;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message && personTexts(message).length > 0) {
      promptIndex = index;
      break;
    }
  }
  const prompt = promptIndex >= 0 ? (personTexts(messages[promptIndex] as Message).at(-1) ?? '') : '';
  const after = messages.slice(promptIndex + 1);
  const toolCallsSoFar = after.filter(
    (message) =>
      message.role === 'assistant' &&
      typeof message.content !== 'string' &&
      message.content.some((block) => block.type === 'tool_use'),
  ).length;
  const delayMs = directive(prompt, 'delay') ?? 5;
  if (prompt.includes('[[fail]]')) return { kind: 'fail' };
  const again = approvedCallAgain(after);
  if (again) return { ...again, preface: '', delayMs };
  const steps = directive(prompt, 'steps') ?? 0;
  const tool = /\[\[tool:(\w+)\]\]/.exec(prompt)?.[1];
  const wanted = Math.max(steps, tool ? 1 : 0);
  if (toolCallsSoFar < wanted) {
    const name = tool ?? 'Bash';
    return {
      kind: 'tool',
      name,
      input: inputFor(name, toolCallsSoFar + 1, workingDirectory(body)),
      preface: toolCallsSoFar === 0 ? 'Working on it.' : '',
      delayMs,
    };
  }
  const later = after.flatMap((message) => (message.role === 'assistant' ? [] : textsOf(message.content)));
  const steers = [...later.join('\n').matchAll(STEER_TEXT)].map((match) => match[1]);
  const hidden = promptIndex >= 0 ? textsOf((messages[promptIndex] as Message).content).join('\n') : '';
  const count = directive(prompt, 'words') ?? 12;
  const said = withoutDirectives(prompt);
  const opening: string[] = [];
  if (hidden.includes('Interrupt handoff:')) opening.push('(after interruption)');
  if (steers.length > 0) opening.push('(steered)', `You added: "${steers.join('" "')}".`);
  else if (hidden.includes('Steer reminder:')) opening.push('(steered)');
  if (prompt.includes('[[history]]')) {
    const earlier = messages
      .slice(0, Math.max(promptIndex, 0))
      .flatMap(personTexts)
      .map((text) => `"${withoutDirectives(text)}"`);
    opening.push(`History: ${earlier.join(' | ')}`);
  }
  opening.push(`You said: "${said}".`);
  const words = [...opening.join(' ').split(' ')];
  for (let index = 0; index < count; index += 1) words.push(`word${index + 1}`);
  return { kind: 'text', words, delayMs };
}

/** The last text the person wrote in a request (the prompt its directives are read from). */
function lastPersonText(body: Record<string, unknown>): string {
  const messages = (body.messages as Message[] | undefined) ?? [];
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const texts = personTexts(messages[index] as Message);
    if (texts.length > 0) return texts.at(-1) ?? '';
  }
  return '';
}

/** The call an approval reminder names, when no tool call came after it yet. */
function approvedCallAgain(
  after: Message[],
): { kind: 'tool'; name: string; input: Record<string, unknown> } | undefined {
  const index = after.findLastIndex(
    (message) =>
      message.role !== 'assistant' && textsOf(message.content).some((text) => text.includes(APPROVED_CALL)),
  );
  if (index < 0) return undefined;
  const calledSince = after
    .slice(index + 1)
    .some(
      (message) =>
        message.role === 'assistant' &&
        typeof message.content !== 'string' &&
        message.content.some((block) => block.type === 'tool_use'),
    );
  if (calledSince) return undefined;
  const text = textsOf((after[index] as Message).content).find((item) => item.includes(APPROVED_CALL)) ?? '';
  const line = text.slice(text.indexOf(APPROVED_CALL) + APPROVED_CALL.length).split('\n')[0] ?? '';
  const call = JSON.parse(line) as { name: string; input: Record<string, unknown> };
  return { kind: 'tool', name: call.name, input: call.input };
}

const APPROVED_CALL = 'Approved call: ';

/** The agent's working directory, as its system prompt names it. */
function workingDirectory(body: Record<string, unknown>): string {
  // Read from the body's JSON text, where a line break is the two characters `\n`.
  return /Primary working directory: ([^\s\\"]+)/.exec(JSON.stringify(body))?.[1] ?? process.cwd();
}

/** A harmless input for a tool; `Write` writes `written.txt` in the working directory. */
function inputFor(name: string, step: number, cwd: string): Record<string, unknown> {
  if (name === 'Bash') return { command: `echo step ${step}`, description: `Step ${step}` };
  if (name === 'Read') return { file_path: `${process.cwd()}/package.json` };
  if (name === 'Write') return { file_path: `${cwd}/written.txt`, content: 'written by the agent' };
  return {};
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

async function answer(request: IncomingMessage, response: ServerResponse, calls: MessagesCall[]) {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (request.method !== 'POST' || !url.pathname.endsWith('/messages')) {
    if (url.pathname.endsWith('/count_tokens')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ input_tokens: MESSAGES_USAGE.input }));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not found' } }));
    return;
  }
  const body = await readBody(request);
  const call: MessagesCall = { body, headers: request.headers, closedEarly: false };
  calls.push(call);
  const plan = planOf(body);
  const inputTokens = directive(lastPersonText(body), 'usage') ?? MESSAGES_USAGE.input;
  const model = typeof body.model === 'string' ? body.model : 'scripted';
  if (plan.kind === 'fail') {
    // A 400 is not retried by the client: the call fails at once, before any text.
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'scripted failure' },
      }),
    );
    return;
  }
  const id = `msg_${crypto.randomUUID().replaceAll('-', '')}`;
  if (body.stream !== true) {
    const text = plan.kind === 'text' ? plan.words.join(' ') : plan.preface;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: MESSAGES_USAGE.input, output_tokens: MESSAGES_USAGE.output },
      }),
    );
    return;
  }
  let closed = false;
  response.on('close', () => {
    if (!response.writableFinished) {
      closed = true;
      call.closedEarly = true;
    }
  });
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>) => {
    if (!closed) response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
  send('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: 1 },
    },
  });
  let index = 0;
  if (plan.kind === 'text') {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const [position, word] of plan.words.entries()) {
      if (closed) return;
      send('content_block_delta', {
        index,
        delta: { type: 'text_delta', text: position === 0 ? word : ` ${word}` },
      });
      await sleep(plan.delayMs);
    }
    send('content_block_stop', { index });
  } else {
    if (plan.preface) {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: plan.preface } });
      send('content_block_stop', { index });
      index += 1;
    }
    // A step takes its time, so a steer can arrive between two tool calls.
    await sleep(plan.delayMs);
    if (closed) return;
    const toolId = `toolu_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    send('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: toolId, name: plan.name, input: {} },
    });
    send('content_block_delta', {
      index,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(plan.input) },
    });
    send('content_block_stop', { index });
  }
  send('message_delta', {
    delta: { stop_reason: plan.kind === 'tool' ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: MESSAGES_USAGE.output },
  });
  send('message_stop', {});
  if (!closed) response.end();
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startMessagesApi(): Promise<MessagesApiServer> {
  const calls: MessagesCall[] = [];
  const server = createServer((request, response) => {
    answer(request, response, calls).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
