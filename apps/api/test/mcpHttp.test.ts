import { type ChildProcess, spawn } from 'node:child_process';
import type { ThreadDetail } from '@chat/contracts';
import { freePort } from '@chat/db';
import { afterAll, describe, expect, it } from 'vitest';
import { type ApiClient, textOfChunks, waitFor } from './support/client';
import { MCP_FIXTURE } from './support/mcpFixture';
import { useTestApi } from './support/testApi';

/**
 * T3 over HTTP: the test MCP server serving Streamable HTTP, which wants a bearer token. `remote`
 * sends it in its configured headers; `wrong-key` sends another and is refused (401).
 */
const TOKEN = 'http-fixture-token-7f3e';
const port = await freePort();
const fixture: ChildProcess = spawn(process.execPath, [MCP_FIXTURE], {
  env: { ...process.env, MCP_FIXTURE_HTTP_PORT: String(port), MCP_FIXTURE_TOKEN: TOKEN },
  stdio: 'ignore',
});
afterAll(() => {
  fixture.kill('SIGKILL');
});

const url = `http://127.0.0.1:${port}/mcp`;
let client: ApiClient;
useTestApi(
  (started) => {
    ({ client } = started);
  },
  {
    MCP_SERVERS: JSON.stringify([
      { name: 'remote', url, headers: { Authorization: `Bearer ${TOKEN}` } },
      { name: 'wrong-key', url, headers: { Authorization: 'Bearer not-the-token' } },
    ]),
  },
);

const statusOf = (detail: ThreadDetail, name: string) =>
  detail.toolServers.find((server) => server.name === name)?.status;

describe('an MCP server over HTTP (T3)', () => {
  it('is reached with its configured headers, and one the server refuses is unavailable', async () => {
    const threadId = await client.createThread();
    const detail = await waitFor(
      () => client.detail(threadId),
      (read) => statusOf(read, 'remote') === 'available' && statusOf(read, 'wrong-key') === 'unavailable',
      30_000,
    );
    expect(detail.tools.filter((tool) => tool.server).map((tool) => tool.name)).toEqual([
      'mcp__remote__echo',
      'mcp__remote__slow',
    ]);
    expect(JSON.stringify(detail)).not.toContain(TOKEN);

    await client.json('PATCH', `/api/threads/${threadId}`, { tools: { mcp__remote__echo: 'allow' } });
    const { chunks } = await client.sendAndRead(
      threadId,
      'over http [[tool:mcp__remote__echo]] [[words:30]]',
    );
    expect(textOfChunks(chunks)).toContain('The tool mcp__remote__echo returned {"text":"echo: over http"}.');
  });
});
