import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ErrorBody, HitlRequest, Thread, ThreadDetail } from '@chat/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import { MCP_SERVER_FAILED } from '../src/chats/turns/driver/mastra/mcp/mcpTools';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readChunksUntil,
  readRest,
  type StreamChunk,
  textOfChunks,
  waitFor,
} from './support/client';
import { fixtureServer } from './support/mcpFixture';
import { useTestApi } from './support/testApi';

/**
 * T3: tools from MCP servers, against the test MCP server (test/fixtures/mcp/testServer.ts) run
 * as real stdio processes: `fixture` (answers), `crashy` (dies in every `slow` call, counting the
 * calls it received in a file), `broken` (a command that does not exist) and `late` (down until the
 * test brings it up).
 */

const scratch = mkdtempSync(join(tmpdir(), 'mcp-test-'));
const lateFlag = join(scratch, 'late-may-start');
const crashyCalls = join(scratch, 'crashy-slow-calls');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SECRET = 'fixture-secret-value-4d1b';
const servers = [
  fixtureServer('fixture', { MCP_FIXTURE_SLOW_MS: '1500', MCP_FIXTURE_TOKEN: SECRET }),
  fixtureServer('crashy', { MCP_FIXTURE_DIE_IN_SLOW: '1', MCP_FIXTURE_CALLS_FILE: crashyCalls }),
  { name: 'broken', command: '/nonexistent/mcp-server', env: { MCP_FIXTURE_TOKEN: SECRET } },
  fixtureServer('late', { MCP_FIXTURE_START_WHEN: lateFlag }),
];

let client: ApiClient;
useTestApi(
  (started) => {
    ({ client } = started);
  },
  { MCP_SERVERS: JSON.stringify(servers) },
);

function setTools(threadId: string, tools: unknown) {
  return client.json<Thread | ErrorBody>('PATCH', `/api/threads/${threadId}`, { tools });
}

function statusOf(detail: ThreadDetail, server: string) {
  return detail.toolServers.find((entry) => entry.name === server)?.status;
}

/** A new chat, once the servers that can start have (they connect in the background). */
async function threadWithServers(): Promise<string> {
  const threadId = await client.createThread();
  await waitFor(
    () => client.detail(threadId),
    (detail) =>
      statusOf(detail, 'fixture') === 'available' &&
      statusOf(detail, 'crashy') === 'available' &&
      statusOf(detail, 'broken') === 'unavailable' &&
      statusOf(detail, 'late') !== 'starting',
    30_000,
  );
  return threadId;
}

const outputs = (chunks: StreamChunk[]) => chunks.filter((chunk) => chunk.type === 'tool-output-available');

async function idle(threadId: string): Promise<ThreadDetail> {
  return await waitFor(
    () => client.detail(threadId),
    (detail) => detail.turnQueue.activeTurn === null,
    30_000,
  );
}

describe('tools from MCP servers (T3)', () => {
  it("lists an available server's tools beside the built-in ones, asking by default, and a server that cannot start as unavailable", async () => {
    const threadId = await threadWithServers();
    const detail = await client.detail(threadId);
    expect(detail.tools.map((tool) => tool.name)).toEqual([
      'current_time',
      'save_note',
      'mcp__fixture__echo',
      'mcp__fixture__slow',
      'mcp__crashy__echo',
      'mcp__crashy__slow',
    ]);
    expect(detail.tools.find((tool) => tool.name === 'mcp__fixture__echo')).toEqual({
      name: 'mcp__fixture__echo',
      description: 'Repeats the text it is given.',
      mode: 'ask',
      defaultMode: 'ask',
      server: 'fixture',
    });
    expect(detail.tools.find((tool) => tool.name === 'current_time')?.server).toBeUndefined();
    expect(detail.toolServers).toEqual([
      { name: 'fixture', status: 'available' },
      { name: 'crashy', status: 'available' },
      { name: 'broken', status: 'unavailable' },
      { name: 'late', status: 'unavailable' },
    ]);
    // The servers' environment (a secret) and commands stay on the server.
    expect(JSON.stringify(detail)).not.toContain(SECRET);
    expect(JSON.stringify(detail)).not.toContain('/nonexistent/mcp-server');
  });

  it('asks before an MCP tool by default and runs it once approved', async () => {
    const threadId = await threadWithServers();
    const first = await client.sendAndRead(threadId, 'hello there [[tool:mcp__fixture__echo]] [[words:30]]');
    expect(first.chunks.some((chunk) => chunk.type === 'tool-approval-request')).toBe(true);
    const request = (await client.detail(threadId)).hitl[0] as HitlRequest;
    expect(request).toMatchObject({
      toolName: 'mcp__fixture__echo',
      status: 'pending',
      args: { text: 'hello there' },
    });
    const approved = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
      decision: 'approve',
    });
    expect(approved.status).toBe(200);
    const chunks = await readChunks(approved);
    expect(outputs(chunks)).toEqual([expect.objectContaining({ output: { text: 'echo: hello there' } })]);
    expect(textOfChunks(chunks)).toContain(
      'The tool mcp__fixture__echo returned {"text":"echo: hello there"}.',
    );
  });

  it('runs an MCP tool the chat allows without asking', async () => {
    const threadId = await threadWithServers();
    expect((await setTools(threadId, { mcp__fixture__echo: 'allow' })).status).toBe(200);
    const { chunks } = await client.sendAndRead(threadId, 'hi [[tool:mcp__fixture__echo]] [[words:6]]');
    expect(chunks.some((chunk) => chunk.type === 'tool-approval-request')).toBe(false);
    expect(outputs(chunks)).toEqual([expect.objectContaining({ output: { text: 'echo: hi' } })]);
    expect((await client.detail(threadId)).hitl).toEqual([]);
  });

  it('an MCP tool switched off mid-reply is not offered at the next step', async () => {
    const threadId = await threadWithServers();
    await setTools(threadId, { mcp__fixture__echo: 'allow' });
    const reply = await client.send(
      threadId,
      'walk [[steps:3]] [[tool:mcp__fixture__echo]] [[delay:1500]] [[words:8]]',
    );
    const stream = iterateChunks(reply);
    const before = await readChunksUntil(stream, (chunk) => chunk.type === 'tool-output-available');
    expect((await setTools(threadId, { mcp__fixture__echo: 'off' })).status).toBe(200);
    const after = await readRest(stream);
    expect(outputs([...before, ...after])).toHaveLength(1);
    expect(textOfChunks(after)).toContain('I have no tool named mcp__fixture__echo.');
    expect((await idle(threadId)).messages.at(-1)?.metadata.failed).toBeUndefined();
  });

  it('with a server that cannot start, the built-in tools still work and the turn completes', async () => {
    const threadId = await threadWithServers();
    const builtIn = await client.sendAndRead(threadId, 'time? [[tool:current_time]] [[words:6]]');
    expect(outputs(builtIn.chunks)).toHaveLength(1);
    const missing = await client.sendAndRead(threadId, 'try [[tool:mcp__broken__echo]] [[words:6]]');
    expect(textOfChunks(missing.chunks)).toContain('I have no tool named mcp__broken__echo.');
    expect(missing.chunks.some((chunk) => chunk.type === 'error')).toBe(false);
    const detail = await idle(threadId);
    expect(detail.messages.filter((message) => message.metadata.failed)).toEqual([]);
    // Naming a tool of a server that is away is refused like any unknown tool.
    expect((await setTools(threadId, { mcp__broken__echo: 'allow' })).status).toBe(400);
  });

  it('a tool call runs at most once: a server that dies during the call is not called again, the model reads that it may or may not have run, and the reply completes (F2)', async () => {
    const threadId = await threadWithServers();
    await setTools(threadId, { mcp__crashy__slow: 'allow' });
    rmSync(crashyCalls, { force: true });
    const { chunks } = await client.sendAndRead(threadId, 'wait [[tool:mcp__crashy__slow]] [[words:30]]');
    // The server's own count, across the restart its client may make: one call, never a second.
    expect(existsSync(crashyCalls) ? readFileSync(crashyCalls, 'utf8') : '').toBe('slow\n');
    const failed = chunks.find((chunk) => chunk.type === 'tool-output-error') as
      | { errorText?: string }
      | undefined;
    expect(failed?.errorText).toContain(MCP_SERVER_FAILED('crashy'));
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
    expect(textOfChunks(chunks)).toContain('The tool mcp__crashy__slow failed.');
    const detail = await idle(threadId);
    expect(detail.messages.at(-1)?.metadata.failed).toBeUndefined();
  });

  it('tries a server that was down again later, and its tools join once it answers', async () => {
    const threadId = await threadWithServers();
    expect((await client.detail(threadId)).tools.some((tool) => tool.server === 'late')).toBe(false);
    writeFileSync(lateFlag, 'up');
    const detail = await waitFor(
      () => client.detail(threadId),
      (read) => statusOf(read, 'late') === 'available',
      90_000,
    );
    expect(detail.tools.filter((tool) => tool.server === 'late').map((tool) => tool.name)).toEqual([
      'mcp__late__echo',
      'mcp__late__slow',
    ]);
  }, 120_000);
});
