import { createServer } from 'node:net';
import type { ChatModel, ModelList, Thread } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config';
import { parseModelEntries } from '../src/platform/modelList';
import { type ApiClient, textOfChunks, waitFor } from './support/client';
import { type ScriptedServer, startScriptedServer } from './support/providerServers';
import { freshDatabase, startTestApi } from './support/testApi';

/**
 * Models found, not typed (issue 42, M5): a `compatible:*@<base URL>` entry offers every model its
 * server lists (`GET /v1/models`), read at start and again every MODEL_LIST_REFRESH_MS; a server
 * that does not answer is shown as unavailable and never fails the start. With nothing configured,
 * an Ollama answering at OLLAMA_BASE_URL (`GET /api/tags`) is found and its models offered beside
 * the built-in one. The servers are scripted ones of ours, over real HTTP.
 */

let database: Awaited<ReturnType<typeof freshDatabase>>;
let server: ScriptedServer;

beforeAll(async () => {
  database = await freshDatabase();
  server = await startScriptedServer('openai');
});

afterAll(async () => {
  await server?.close();
  await database?.drop();
});

/** A loopback address where nothing listens: a port taken and given back. */
async function deadAddress(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}`;
}

async function modelsOf(client: ApiClient): Promise<ChatModel[]> {
  return (await client.json<ModelList>('GET', '/api/models')).body.models;
}

const summary = (models: ChatModel[]) =>
  models.map(({ id, label, available }) => `${id} | ${label} | ${available ? 'up' : 'down'}`);

describe('a compatible:* entry (issue 42)', () => {
  it('reads as a source of models with its prefix, label, window and key; only compatible: takes *', () => {
    const { models, sources } = parseModelEntries(
      `compatible:*@http://gpu-box:8000/v1/;id=vllm;label=vLLM;window=32000;key=VLLM_KEY`,
      { VLLM_KEY: 'k' },
    );
    // A list of found models alone still has a model when their server is down: the built-in one.
    expect(models.map((model) => model.id)).toEqual(['local']);
    expect(sources).toEqual([
      {
        kind: 'compatible',
        prefix: 'vllm',
        label: 'vLLM',
        baseUrl: 'http://gpu-box:8000/v1',
        apiKey: 'k',
        contextWindow: 32_000,
        configured: true,
      },
    ]);
    for (const [setting, message] of [
      ['openai:*', /entry "openai:\*": only a compatible: entry stands for every model/],
      ['compatible:*@http://a/v1,compatible:*@http://b/v1', /the id "compatible" is used twice/],
    ] as const) {
      expect(() => loadConfig({ CHAT_MODELS: setting })).toThrow(ConfigError);
      expect(() => loadConfig({ CHAT_MODELS: setting })).toThrow(message);
    }
  });

  it('offers what the server lists, follows the list as it changes, and shows a server that stops answering as unavailable', async () => {
    server.listed = ['alpha', 'beta'];
    server.listDown = false;
    const api = await startTestApi(database.url, {
      CHAT_MODELS: `local,compatible:*@${server.baseUrl};id=lab;label=Lab;key=LAB_KEY`,
      LAB_KEY: 'lab-secret',
      MODEL_LIST_REFRESH_MS: '200',
    });
    try {
      const client = await api.client();
      const response = await client.fetch('GET', '/api/models');
      const raw = await response.text();
      expect(summary((JSON.parse(raw) as ModelList).models)).toEqual([
        'local | Demo model (scripted replies) | up',
        'lab:alpha | alpha (Lab) | up',
        'lab:beta | beta (Lab) | up',
      ]);
      expect(raw).not.toContain('127.0.0.1');
      expect(raw).not.toContain('lab-secret');
      expect(server.listCalls.at(-1)?.authorization).toBe('Bearer lab-secret');

      const threadId = await client.createThread();
      expect(
        (await client.json<Thread>('PATCH', `/api/threads/${threadId}`, { model: 'lab:beta' })).status,
      ).toBe(200);
      const { chunks } = await client.sendAndRead(threadId, 'hi');
      expect(textOfChunks(chunks)).toBe('Hello from beta.');
      expect((await client.detail(threadId)).messages.at(-1)?.metadata.model).toBe('lab:beta');

      server.listed = ['alpha', 'gamma'];
      await waitFor(
        () => modelsOf(client),
        (models) => models.some((model) => model.id === 'lab:gamma'),
      );
      expect(summary(await modelsOf(client))).toEqual([
        'local | Demo model (scripted replies) | up',
        'lab:alpha | alpha (Lab) | up',
        'lab:gamma | gamma (Lab) | up',
      ]);

      server.listDown = true;
      const down = await waitFor(
        () => modelsOf(client),
        (models) => models.some((model) => !model.available),
      );
      expect(summary(down)).toEqual([
        'local | Demo model (scripted replies) | up',
        'lab:alpha | alpha (Lab) | down',
        'lab:gamma | gamma (Lab) | down',
      ]);
      server.listDown = false;
      await waitFor(
        () => modelsOf(client),
        (models) => models.every((model) => model.available),
      );
    } finally {
      await api.close();
    }
  });

  it('starts while the server is down and says so in the list; nothing can pick its placeholder', async () => {
    const dead = await deadAddress();
    const api = await startTestApi(database.url, {
      CHAT_MODELS: `compatible:*@${dead}/v1;id=lab;label=Lab`,
    });
    try {
      const client = await api.client();
      expect(await modelsOf(client)).toEqual([
        {
          id: 'local',
          label: 'Demo model (scripted replies)',
          contextWindow: 8_000,
          documentTokens: 24_000,
          builtIn: true,
          available: true,
        },
        {
          id: 'lab:*',
          label: 'Lab (not answering)',
          contextWindow: 128_000,
          documentTokens: 24_000,
          builtIn: false,
          available: false,
        },
      ]);
      const threadId = await client.createThread();
      const refused = await client.json('PATCH', `/api/threads/${threadId}`, { model: 'lab:*' });
      expect(refused.status).toBe(400);
    } finally {
      await api.close();
    }
  });
});

describe('an Ollama at its address, with nothing configured (issue 42)', () => {
  it('offers its models beside the built-in one, which stays the default, and chats through its OpenAI-compatible API', async () => {
    server.listed = ['llama3.2:latest', 'qwen3:8b'];
    server.listDown = false;
    const api = await startTestApi(database.url, { OLLAMA_BASE_URL: server.origin });
    try {
      const client = await api.client();
      const models = await modelsOf(client);
      expect(models.map(({ id, label, contextWindow }) => [id, label, contextWindow])).toEqual([
        ['local', 'Demo model (scripted replies)', 8_000],
        ['ollama:llama3.2:latest', 'llama3.2:latest (Ollama)', 4_096],
        ['ollama:qwen3:8b', 'qwen3:8b (Ollama)', 4_096],
      ]);
      expect(server.listCalls.length).toBeGreaterThan(0);

      const threadId = await client.createThread();
      await client.json('PATCH', `/api/threads/${threadId}`, { model: 'ollama:qwen3:8b' });
      const before = server.calls.length;
      const { chunks } = await client.sendAndRead(threadId, 'hello ollama');
      expect(textOfChunks(chunks)).toBe('Hello from qwen3:8b.');
      expect(server.calls.slice(before).map((call) => call.model)).toEqual(['qwen3:8b']);
    } finally {
      await api.close();
    }
  });

  it('is not looked for when a model is configured, and an Ollama that is not there is not listed', async () => {
    expect(loadConfig({ CHAT_MODEL: 'openai:gpt-4o', OPENAI_API_KEY: 'k' }).modelSources).toEqual([]);
    expect(loadConfig({ CHAT_MODELS: 'local' }).modelSources).toEqual([]);
    expect(loadConfig({ OLLAMA_BASE_URL: 'off' }).modelSources).toEqual([]);
    expect(loadConfig({}).modelSources).toMatchObject([
      { kind: 'ollama', baseUrl: 'http://127.0.0.1:11434' },
    ]);

    const api = await startTestApi(database.url, { OLLAMA_BASE_URL: await deadAddress() });
    try {
      const client = await api.client();
      expect((await modelsOf(client)).map((model) => model.id)).toEqual(['local']);
    } finally {
      await api.close();
    }
  });
});
