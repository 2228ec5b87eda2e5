import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AccountSettings, ErrorBody, ModelList, Share, Thread, ThreadDetail } from '@chat/contracts';
import { turnErrorMessages } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config';
import { parseModelList } from '../src/platform/modelList';
import { readChunks, textOfChunks, textOfMessage, waitFor } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * Several configured models (M1), a model per chat and per reply (M2), regenerate with another
 * model (M3) and custom instructions (M4). A recording OpenAI-compatible server, reached over real
 * HTTP through the AI SDK's OpenAI provider, shows what each model was sent.
 */

interface Recorded {
  model: string;
  authorization: string | undefined;
  messages: Array<{ role: string; content: unknown }>;
}

let database: Awaited<ReturnType<typeof freshDatabase>>;
let compatible: Server;
const recorded: Recorded[] = [];

/** A chat completions server that answers "Reply from <model>." and records each request. */
function startRecordingServer(): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const parsed = JSON.parse(body) as Recorded;
      recorded.push({
        model: parsed.model,
        authorization: request.headers.authorization,
        messages: parsed.messages,
      });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: parsed.model };
      const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
      send({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Reply from' }, finish_reason: null }],
      });
      send({
        ...base,
        choices: [{ index: 0, delta: { content: ` ${parsed.model}.` }, finish_reason: null }],
      });
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      response.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function baseUrl(): string {
  return `http://127.0.0.1:${(compatible.address() as AddressInfo).port}/v1`;
}

function modelsSetting(): string {
  return [
    'local;label=Local',
    `openai:alpha@${baseUrl()};label=Alpha;window=32000`,
    `openai:beta@${baseUrl()};label=Beta;key=BETA_KEY`,
  ].join(',');
}

/** The system text one recorded call got, in order. */
function systemTextOf(call: Recorded | undefined): string {
  return (call?.messages ?? [])
    .filter((message) => message.role === 'system')
    .map((message) =>
      typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
    )
    .join('\n');
}

beforeAll(async () => {
  database = await freshDatabase();
  compatible = await startRecordingServer();
});

afterAll(async () => {
  await new Promise((resolve) => compatible.close(resolve));
  await database.drop();
});

describe('CHAT_MODELS (M1)', () => {
  it('reads entries with their ids, labels, windows, base URLs and key variables; the first is the default', () => {
    const models = parseModelList(
      'local;label=Built-in, openai:gpt-4.1-mini;label=GPT-4.1 mini;window=1000000, openai:qwen3@http://127.0.0.1:8000/v1;id=qwen;key=VLLM_KEY',
      { OPENAI_API_KEY: 'sk-openai', VLLM_KEY: 'sk-vllm' },
    );
    expect(models).toEqual([
      { kind: 'local', id: 'local', label: 'Built-in', contextWindow: 8_000 },
      {
        kind: 'openai',
        id: 'openai:gpt-4.1-mini',
        label: 'GPT-4.1 mini',
        contextWindow: 1_000_000,
        model: 'gpt-4.1-mini',
        apiKey: 'sk-openai',
      },
      {
        kind: 'openai',
        id: 'qwen',
        label: 'qwen',
        contextWindow: 128_000,
        model: 'qwen3',
        baseUrl: 'http://127.0.0.1:8000/v1',
        apiKey: 'sk-vllm',
      },
    ]);
  });

  it('stops the start at a bad entry, naming it', () => {
    const bad: Array<[string, RegExp]> = [
      ['local,mistral:large', /entry "mistral:large": expected "local" or "<openai\|anthropic/],
      ['local,openai:gpt-4o', /entry "openai:gpt-4o": needs OPENAI_API_KEY/],
      ['openai:x@http://h/v1;key=NOPE_KEY,openai:', /entry "openai:": names no model/],
      ['local;window=12', /entry "local;window=12": window must be/],
      ['local;colour=blue', /entry "local;colour=blue": unknown setting "colour"/],
      ['local,local', /entry "local": the id "local" is used twice/],
      ['openai:m@not a url', /entry "openai:m@not a url": "not a url" is not a URL/],
      [' , ', /lists no model/],
    ];
    for (const [setting, message] of bad) {
      expect(() => loadConfig({ CHAT_MODELS: setting })).toThrow(ConfigError);
      expect(() => loadConfig({ CHAT_MODELS: setting })).toThrow(message);
    }
  });

  it('keeps the single-model settings working when CHAT_MODELS is unset', () => {
    expect(loadConfig({}).models).toEqual([
      { kind: 'local', id: 'local', label: 'Demo model (scripted replies)', contextWindow: 8_000 },
    ]);
    expect(
      loadConfig({
        CHAT_MODEL: 'openai:llama3',
        OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
        CHAT_CONTEXT_WINDOW: '16000',
      }).models,
    ).toEqual([
      {
        kind: 'openai',
        id: 'openai:llama3',
        label: 'openai:llama3',
        contextWindow: 16_000,
        model: 'llama3',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKey: 'not-needed',
      },
    ]);
  });
});

describe('an honest first run', () => {
  it('names the built-in model for what it is: a scripted demo, in the list and in GET /api/models', async () => {
    expect(parseModelList('local, local;id=other', {}).map((model) => model.label)).toEqual([
      'Demo model (scripted replies)',
      'Demo model (scripted replies)',
    ]);
    const fresh = await startTestApi(database.url);
    try {
      const client = await fresh.client();
      expect((await client.json<ModelList>('GET', '/api/models')).body).toEqual({
        models: [
          {
            id: 'local',
            label: 'Demo model (scripted replies)',
            contextWindow: 8_000,
            documentTokens: 24_000,
            builtIn: true,
            available: true,
          },
        ],
      });
    } finally {
      await fresh.close();
    }
  });
});

describe('a model per chat, per reply and per regenerate; custom instructions (M2-M4)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(database.url, { CHAT_MODELS: modelsSetting(), BETA_KEY: 'sk-beta-secret' });
  });
  afterAll(async () => api.close());

  it('lists the configured models without keys or URLs', async () => {
    const client = await api.client();
    const response = await client.fetch('GET', '/api/models');
    expect(response.status).toBe(200);
    const raw = await response.text();
    expect(JSON.parse(raw) as ModelList).toEqual({
      models: [
        {
          id: 'local',
          label: 'Local',
          contextWindow: 8_000,
          documentTokens: 24_000,
          builtIn: true,
          available: true,
        },
        {
          id: 'openai:alpha',
          label: 'Alpha',
          contextWindow: 32_000,
          documentTokens: 24_000,
          builtIn: false,
          available: true,
        },
        {
          id: 'openai:beta',
          label: 'Beta',
          contextWindow: 128_000,
          documentTokens: 24_000,
          builtIn: false,
          available: true,
        },
      ],
    });
    expect(raw).not.toContain('127.0.0.1');
    expect(raw).not.toContain('sk-beta-secret');
  });

  it('refuses an unknown model with a clear 400 and changes nothing', async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    const refused = await client.json<ErrorBody>('PATCH', `/api/threads/${threadId}`, {
      model: 'openai:gamma',
      title: 'Should not stick',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('bad_request');
    expect(refused.body.error.message).toContain('openai:gamma');
    const { thread } = await client.detail(threadId);
    expect(thread.model).toBeUndefined();
    expect(thread.title).toBe('New chat');
  });

  it("runs the chat's model, records it on the reply, sizes the meter by its window, and starts the next chat with it", async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    const picked = await client.json<Thread>('PATCH', `/api/threads/${threadId}`, { model: 'openai:alpha' });
    expect(picked.status).toBe(200);
    expect(picked.body.model).toBe('openai:alpha');

    const before = recorded.length;
    const { chunks } = await client.sendAndRead(threadId, 'hello alpha');
    expect(textOfChunks(chunks)).toBe('Reply from alpha.');
    expect(recorded.slice(before).map((call) => call.model)).toEqual(['alpha']);

    const detail = await client.detail(threadId);
    expect(detail.thread.model).toBe('openai:alpha');
    expect(detail.messages.at(-1)?.metadata.model).toBe('openai:alpha');
    expect(detail.context.window).toBe(32_000);
    const compacted = await client.json<{ context: { window: number } }>(
      'POST',
      `/api/threads/${threadId}/compact`,
      {},
    );
    expect(compacted.body.context.window).toBe(32_000);

    const next = await client.createThread();
    expect((await client.detail(next)).thread.model).toBe('openai:alpha');
  });

  it('runs a queued turn with the model chosen by the time it is claimed; each reply keeps its own', async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    const running = await client.send(threadId, 'slow local [[words:60]] [[delay:20]]');
    expect(running.status).toBe(200);
    await client.queued(threadId, 'queued for beta');
    const picked = await client.json<Thread>('PATCH', `/api/threads/${threadId}`, { model: 'openai:beta' });
    expect(picked.status).toBe(200);
    await readChunks(running);

    const before = recorded.length;
    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`, {});
    expect(claim.status).toBe(200);
    expect(textOfChunks(await readChunks(claim))).toBe('Reply from beta.');
    const call = recorded.at(before);
    expect(call?.model).toBe('beta');
    // Its own key variable, not OPENAI_API_KEY's.
    expect(call?.authorization).toBe('Bearer sk-beta-secret');

    const replies = (await client.detail(threadId)).messages.filter(
      (message) => message.role === 'assistant',
    );
    expect(replies.map((reply) => reply.metadata.model)).toEqual(['local', 'openai:beta']);
  });

  it('regenerates with another model: the new version records it, the earlier keeps its own, the chat keeps its choice', async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    await client.json('PATCH', `/api/threads/${threadId}`, { model: 'local' });
    await client.sendAndRead(threadId, 'answer twice [[words:3]]');
    const first = await client.detail(threadId);
    const reply = first.messages.at(-1);

    const unknown = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/messages/${reply?.id}/regenerate`,
      { clientRequestId: crypto.randomUUID(), model: 'openai:gamma' },
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('bad_request');
    expect((await client.detail(threadId)).thread.activeBranchId).toBe(first.thread.activeBranchId);

    const before = recorded.length;
    const response = await client.fetch('POST', `/api/threads/${threadId}/messages/${reply?.id}/regenerate`, {
      clientRequestId: crypto.randomUUID(),
      model: 'openai:alpha',
    });
    expect(response.status).toBe(200);
    expect(textOfChunks(await readChunks(response))).toBe('Reply from alpha.');
    expect(recorded.at(before)?.model).toBe('alpha');

    const after = await client.detail(threadId);
    expect(after.messages.at(-1)?.metadata.model).toBe('openai:alpha');
    expect(after.thread.model).toBe('local');
    // The earlier version still says which model wrote it.
    const asked = after.messages.at(-2);
    const firstBranch = asked?.metadata.version?.branchIds[0] ?? '';
    await client.fetch('PUT', `/api/threads/${threadId}/active-branch`, { branchId: firstBranch });
    expect((await client.detail(threadId)).messages.at(-1)?.metadata.model).toBe('local');
  });

  it('gives the account and chat instructions after the built-in ones; never in a share or an export', async () => {
    const client = await api.client();
    const saved = await client.json<AccountSettings>('PATCH', '/api/account/settings', {
      instructions: 'ACCOUNT-RULE: answer in French.',
    });
    expect(saved.status).toBe(200);
    expect(saved.body.instructions).toBe('ACCOUNT-RULE: answer in French.');
    const tooLong = await client.json<ErrorBody>('PATCH', '/api/account/settings', {
      instructions: 'x'.repeat(4_001),
    });
    expect(tooLong.status).toBe(400);
    expect((await client.json<AccountSettings>('GET', '/api/account/settings')).body.instructions).toBe(
      'ACCOUNT-RULE: answer in French.',
    );

    const threadId = await client.createThread();
    const set = await client.json<Thread>('PATCH', `/api/threads/${threadId}`, {
      model: 'openai:alpha',
      instructions: 'CHAT-RULE: be brief.',
    });
    expect(set.body.instructions).toBe('CHAT-RULE: be brief.');
    expect((await client.detail(threadId)).thread.instructions).toBe('CHAT-RULE: be brief.');
    // Not with every entry of the list.
    const listed = (await client.allThreads()).find((thread) => thread.id === threadId);
    expect(listed?.id).toBe(threadId);
    expect(listed?.instructions).toBeUndefined();

    const before = recorded.length;
    await client.sendAndRead(threadId, 'hi with rules');
    const system = systemTextOf(recorded.at(before));
    const builtIn = system.indexOf('You are a helpful');
    const account = system.indexOf('ACCOUNT-RULE');
    const chat = system.indexOf('CHAT-RULE');
    expect(builtIn).toBeGreaterThanOrEqual(0);
    expect(account).toBeGreaterThan(builtIn);
    expect(chat).toBeGreaterThan(account);

    const { body } = await client.json<{ share: Share }>('POST', `/api/threads/${threadId}/shares`, {});
    const shared = await (await fetch(`${api.baseUrl}/api/shares/${body.share.token}`)).text();
    const markdown = await (await client.fetch('GET', `/api/threads/${threadId}/export?format=md`)).text();
    const json = await (await client.fetch('GET', `/api/threads/${threadId}/export?format=json`)).text();
    for (const text of [shared, markdown, json]) {
      expect(text).toContain('hi with rules');
      expect(text).not.toContain('CHAT-RULE');
      expect(text).not.toContain('ACCOUNT-RULE');
    }

    // Cleared, they are gone from the next call.
    await client.json('PATCH', `/api/threads/${threadId}`, { instructions: '' });
    await client.json('PATCH', '/api/account/settings', { instructions: '' });
    const again = recorded.length;
    await client.sendAndRead(threadId, 'hi without rules');
    expect(systemTextOf(recorded.at(again))).not.toMatch(/ACCOUNT-RULE|CHAT-RULE/);
  });
});

describe('a model removed from the configuration (M2, Q11)', () => {
  it('fails the turn at the head with a clear error; no other model answers', async () => {
    const first = await startTestApi(database.url, {
      CHAT_MODELS: modelsSetting(),
      BETA_KEY: 'sk-beta-secret',
    });
    const client = await first.client();
    const threadId = await client.createThread();
    await client.json('PATCH', `/api/threads/${threadId}`, { model: 'openai:beta' });
    await first.close();

    const second = await startTestApi(database.url, { CHAT_MODELS: `local,openai:alpha@${baseUrl()}` });
    try {
      const again = client.via(second.baseUrl);
      const before = recorded.length;
      const response = await again.send(threadId, 'who answers?');
      expect(response.status).toBe(200);
      await readChunks(response);
      const detail: ThreadDetail = await waitFor(
        () => again.detail(threadId),
        (read) =>
          read.turnQueue.activeTurn?.status === 'failed' || read.turnQueue.items[0]?.status === 'failed',
      );
      const head = detail.turnQueue.activeTurn ?? detail.turnQueue.items[0];
      expect(head?.status).toBe('failed');
      expect(head?.error).toBe(turnErrorMessages.modelRemoved('openai:beta'));
      expect(recorded.length).toBe(before);
      expect(detail.messages.some((message) => textOfMessage(message).includes('Reply from'))).toBe(false);
      expect(detail.thread.model).toBe('openai:beta');
    } finally {
      await second.close();
    }
  });
});
