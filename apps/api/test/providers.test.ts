import type { HitlRequest, ModelList, Thread } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config';
import { parseModelList } from '../src/platform/modelList';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readChunksUntil,
  textOfChunks,
  waitFor,
} from './support/client';
import {
  NOTE_TEXT,
  type ScriptedServer,
  SLOW_WORDS,
  startScriptedServer,
  USAGE,
  type WireProtocol,
} from './support/providerServers';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * Providers beyond OpenAI (M1): `anthropic:`, `google:` and `compatible:` entries, each through its
 * own AI SDK package, against a scripted server of ours that speaks that provider's real wire
 * protocol over real HTTP: a reply streams, its usage is recorded, a tool call waits for approval
 * and resumes, and Stop closes the provider's stream.
 */

const KEYS = {
  ANTHROPIC_API_KEY: 'sk-ant-secret',
  GOOGLE_GENERATIVE_AI_API_KEY: 'g-secret',
  COMPAT_KEY: 'c-secret',
};

let database: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestApi;
const servers = {} as Record<WireProtocol, ScriptedServer>;

/** The entry, the id and how the key reaches the server, per protocol. */
const cases: Array<{ protocol: WireProtocol; id: string; keyHeader: string; key: string }> = [
  { protocol: 'anthropic', id: 'anthropic:claude-test', keyHeader: 'x-api-key', key: KEYS.ANTHROPIC_API_KEY },
  {
    protocol: 'google',
    id: 'google:gemini-test',
    keyHeader: 'x-goog-api-key',
    key: KEYS.GOOGLE_GENERATIVE_AI_API_KEY,
  },
  {
    protocol: 'openai',
    id: 'compatible:qwen-test',
    keyHeader: 'authorization',
    key: `Bearer ${KEYS.COMPAT_KEY}`,
  },
];

beforeAll(async () => {
  database = await freshDatabase();
  for (const protocol of ['anthropic', 'google', 'openai'] as const)
    servers[protocol] = await startScriptedServer(protocol);
  api = await startTestApi(database.url, {
    ...KEYS,
    CHAT_MODELS: [
      'local',
      `anthropic:claude-test@${servers.anthropic.baseUrl};label=Claude`,
      `google:gemini-test@${servers.google.baseUrl};window=1000000`,
      `compatible:qwen-test@${servers.openai.baseUrl};key=COMPAT_KEY`,
    ].join(','),
  });
});

afterAll(async () => {
  await api?.close();
  for (const server of Object.values(servers)) await server.close();
  await database?.drop();
});

async function chatWith(client: ApiClient, model: string): Promise<string> {
  const threadId = await client.createThread();
  const picked = await client.json<Thread>('PATCH', `/api/threads/${threadId}`, { model });
  expect(picked.status).toBe(200);
  return threadId;
}

describe('anthropic:, google: and compatible: entries (M1)', () => {
  it('reads them with their default key variables; a missing key or base URL stops the start, naming the entry', () => {
    expect(
      parseModelList(
        'anthropic:claude-sonnet-4-5, google:gemini-2.5-flash;label=Gemini, compatible:qwen3@http://h:8000/v1',
        {
          ANTHROPIC_API_KEY: 'a',
          GOOGLE_GENERATIVE_AI_API_KEY: 'g',
        },
      ),
    ).toEqual([
      {
        kind: 'anthropic',
        id: 'anthropic:claude-sonnet-4-5',
        label: 'anthropic:claude-sonnet-4-5',
        contextWindow: 128_000,
        model: 'claude-sonnet-4-5',
        apiKey: 'a',
      },
      {
        kind: 'google',
        id: 'google:gemini-2.5-flash',
        label: 'Gemini',
        contextWindow: 128_000,
        model: 'gemini-2.5-flash',
        apiKey: 'g',
      },
      {
        kind: 'compatible',
        id: 'compatible:qwen3',
        label: 'compatible:qwen3',
        contextWindow: 128_000,
        model: 'qwen3',
        baseUrl: 'http://h:8000/v1',
      },
    ]);
    const bad: Array<[string, RegExp]> = [
      ['anthropic:claude', /entry "anthropic:claude": needs ANTHROPIC_API_KEY/],
      ['google:gemini;key=MY_GEMINI', /entry "google:gemini;key=MY_GEMINI": needs MY_GEMINI/],
      ['compatible:qwen3', /entry "compatible:qwen3": needs the base URL/],
      [
        'mistral:large',
        /entry "mistral:large": expected "local" or "<openai\|anthropic\|google\|compatible>/,
      ],
    ];
    for (const [setting, message] of bad) {
      expect(() => loadConfig({ CHAT_MODELS: setting })).toThrow(ConfigError);
      expect(() => loadConfig({ CHAT_MODELS: setting })).toThrow(message);
    }
  });

  it('lists them without keys or URLs', async () => {
    const client = await api.client();
    const response = await client.fetch('GET', '/api/models');
    const raw = await response.text();
    expect(
      (JSON.parse(raw) as ModelList).models.map(({ id, label, contextWindow }) => [id, label, contextWindow]),
    ).toEqual([
      ['local', 'Demo model (scripted replies)', 8_000],
      ['anthropic:claude-test', 'Claude', 128_000],
      ['google:gemini-test', 'google:gemini-test', 1_000_000],
      ['compatible:qwen-test', 'compatible:qwen-test', 128_000],
    ]);
    for (const secret of [...Object.values(KEYS), '127.0.0.1']) expect(raw).not.toContain(secret);
  });
});

describe.each(cases)('a $id model over its own wire protocol', ({ protocol, id, keyHeader, key }) => {
  it('streams a reply, sends the key only to its server, and records the usage the server counted', async () => {
    const server = servers[protocol];
    const client = await api.client();
    const threadId = await chatWith(client, id);
    const before = server.calls.length;
    const { chunks } = await client.sendAndRead(threadId, 'hi there');
    const model = id.slice(id.indexOf(':') + 1);
    expect(textOfChunks(chunks)).toBe(`Hello from ${model}.`);
    const call = server.calls.at(before);
    expect(call?.model).toBe(model);
    expect(call?.headers[keyHeader]).toBe(key);

    const reply = (await client.detail(threadId)).messages.at(-1);
    expect(reply?.metadata.model).toBe(id);
    expect(reply?.metadata.usage).toMatchObject({ inputTokens: USAGE.input, outputTokens: USAGE.output });
  });

  it('suspends a tool call that needs approval, and approving runs the tool and sends its result back', async () => {
    const server = servers[protocol];
    const client = await api.client();
    const threadId = await chatWith(client, id);
    await client.sendAndRead(threadId, 'remember this [[note]]');
    const waiting = await client.detail(threadId);
    const request = waiting.hitl.find((entry) => entry.status === 'pending') as HitlRequest;
    expect(request).toMatchObject({ toolName: 'save_note', args: { text: NOTE_TEXT } });

    const before = server.calls.length;
    const approved = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
      decision: 'approve',
    });
    expect(approved.status).toBe(200);
    const chunks = await readChunks(approved);
    expect(chunks.some((chunk) => chunk.type === 'tool-output-available')).toBe(true);
    expect(textOfChunks(chunks)).toContain('Saved it.');
    expect(server.calls.slice(before).map((call) => call.hadToolResult)).toEqual([true]);

    const detail = await client.detail(threadId);
    expect(detail.notes.map((note) => note.text)).toEqual([NOTE_TEXT]);
    expect(detail.hitl).toMatchObject([{ id: request.id, status: 'approved' }]);
  });

  it("Stop closes the provider's stream part-way and keeps the partial reply, marked interrupted", async () => {
    const server = servers[protocol];
    const client = await api.client();
    const threadId = await chatWith(client, id);
    const closedBefore = server.closedEarly;
    const response = await client.send(threadId, 'a long one [[slow]]');
    expect(response.status).toBe(200);
    const stream = iterateChunks(response);
    await readChunksUntil(stream, (chunk) => chunk.type === 'text-delta');

    const stopped = await client.fetch('POST', `/api/threads/${threadId}/interrupt`, {});
    expect(stopped.status).toBe(200);
    await waitFor(
      async () => server.closedEarly,
      (closed) => closed > closedBefore,
    );
    expect(server.slowWordsWritten).toBeLessThan(SLOW_WORDS);
    for await (const _ of stream) {
      // Drain what the API still sends before the stream ends.
    }
    const reply = await waitFor(
      async () => (await client.detail(threadId)).messages.at(-1),
      (message) => message?.role === 'assistant' && message.metadata.interrupted === true,
    );
    expect(reply?.metadata.model).toBe(id);
  });
});
