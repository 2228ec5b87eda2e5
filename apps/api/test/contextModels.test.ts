import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ThreadDetail } from '@chat/contracts';
import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptTables } from '../src/chats/transcript/tables';
import { textOfChunks } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * The model's context on other configurations than the default: an OpenAI-compatible server
 * (its own usage is what a reply records, C1) and compaction turned off (the window is the newest
 * messages that fit, and the transcript marks where the model stops seeing, C3's "no silent cut").
 */

let database: Awaited<ReturnType<typeof freshDatabase>>;
let compatible: Server;
const requests: Array<Record<string, unknown>> = [];

/** A chat completions server that streams "Hello there." and the usage it counted. */
function startCompatibleServer(): Promise<Server> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      requests.push(JSON.parse(body) as Record<string, unknown>);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'compatible' };
      const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
      send({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }],
      });
      send({ ...base, choices: [{ index: 0, delta: { content: ' there.' }, finish_reason: null }] });
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      send({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: 321,
          completion_tokens: 7,
          total_tokens: 328,
          prompt_tokens_details: { cached_tokens: 300 },
        },
      });
      response.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  database = await freshDatabase();
  compatible = await startCompatibleServer();
});

afterAll(async () => {
  await new Promise((resolve) => compatible.close(resolve));
  await database.drop();
});

describe('an OpenAI-compatible server (C1)', () => {
  let api: TestApi;
  beforeAll(async () => {
    const { port } = compatible.address() as AddressInfo;
    api = await startTestApi(database.url, {
      CHAT_MODEL: 'openai:compatible',
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    });
  });
  afterAll(async () => api.close());

  it('stores the usage the server sends with the reply', async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    const { chunks } = await client.sendAndRead(threadId, 'hi');
    expect(textOfChunks(chunks)).toBe('Hello there.');
    const reply = (await client.detail(threadId)).messages.at(-1);
    expect(reply?.metadata.usage).toEqual({ inputTokens: 321, outputTokens: 7, cachedInputTokens: 300 });
    expect((await client.detail(threadId)).context.window).toBe(128_000);
  });
});

describe('compaction turned off (C3)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(database.url, { CONTEXT_COMPACT_AT: '0' });
  });
  afterAll(async () => api.close());

  it('gives the model the newest messages that fit and marks the first one it sees; no summary', async () => {
    const client = await api.client();
    const threadId = await client.createThread();
    const { db } = api.runtime.database;
    const [branch] = await db.select().from(schema.branches).where(eq(schema.branches.threadId, threadId));
    const [thread] = await db.select().from(schema.threads).where(eq(schema.threads.id, threadId));
    const filler = Array.from({ length: 30 }, (_, word) => `answer${word}`).join(' ');
    const start = Date.now() - 60_000;
    await transcriptTables.insertMessages(
      db,
      Array.from({ length: 240 }, (_, index) => ({
        id: crypto.randomUUID(),
        threadId: branch?.memoryThreadId ?? '',
        resourceId: thread?.ownerId ?? '',
        role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: JSON.stringify({
          format: 2,
          parts: [{ type: 'text', text: index % 2 === 0 ? `question ${index / 2}` : filler }],
        }),
        createdAt: new Date(start + index * 10),
      })),
    );
    const before: ThreadDetail = await client.detail(threadId);
    expect(before.context.used).toBeGreaterThan(before.context.window);

    const { chunks } = await client.sendAndRead(threadId, 'what is left? [[history]] [[words:5]]');
    expect(chunks.some((chunk) => chunk.type === 'data-compaction')).toBe(false);
    const reply = textOfChunks(chunks);
    expect(reply).not.toContain('Summary:');
    expect(reply).toContain('"question 119"');
    expect(reply).not.toContain('"question 0"');

    const detail = await client.detail(threadId);
    const marked = detail.messages.find((message) => message.metadata.compaction);
    expect(marked?.metadata.compaction).toMatchObject({ kind: 'cut', summary: null, error: null });
    expect(detail.messages).toHaveLength(242);
    expect(detail.context.used).toBeLessThan(detail.context.window);
  });
});
