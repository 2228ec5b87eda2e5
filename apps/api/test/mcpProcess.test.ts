import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, textOfChunks, waitFor } from './support/client';
import { fixtureServer } from './support/mcpFixture';
import { freshDatabase } from './support/testApi';

/**
 * T3 in the API's own process: what an operator's log holds about MCP servers, that a server which
 * cannot start never brings the API down, and that a connected MCP client leaves the API's own
 * shutdown in charge of SIGTERM (the library would otherwise end the process on it at once).
 */
const SECRET = 'mcp-process-secret-91c7';
const MESSAGE_MARK = 'private-words-5e2a';

let database: TestDatabase | undefined;
let api: ApiProcess | undefined;

beforeAll(async () => {
  database = await freshDatabase();
});

afterAll(async () => {
  if (api && api.child.exitCode === null && api.child.signalCode === null) await api.kill();
  await database?.drop();
});

describe('MCP servers in the API process (T3)', () => {
  it('logs a server that cannot start without its secrets, keeps serving, and shuts down cleanly on SIGTERM', async () => {
    api = await startApiProcess(
      {
        DATABASE_URL: database?.url ?? '',
        LOG_LEVEL: 'info',
        MCP_SERVERS: JSON.stringify([
          fixtureServer('fixture', { MCP_FIXTURE_SLOW_MS: '4000', MCP_FIXTURE_TOKEN: SECRET }),
          { name: 'broken', command: '/nonexistent/mcp-server', env: { MCP_FIXTURE_TOKEN: SECRET } },
        ]),
      },
      { captureOutput: true },
    );
    const client = await ApiClient.signIn(api.baseUrl);
    const threadId = await client.createThread();
    const statusOf = (name: string) => async () =>
      (await client.detail(threadId)).toolServers.find((server) => server.name === name)?.status;
    await waitFor(statusOf('fixture'), (status) => status === 'available', 30_000);
    await waitFor(statusOf('broken'), (status) => status === 'unavailable', 30_000);

    // A real call through the process, with the person's words as the tool's input.
    await client.json('PATCH', `/api/threads/${threadId}`, { tools: { mcp__fixture__echo: 'allow' } });
    const { chunks } = await client.sendAndRead(
      threadId,
      `${MESSAGE_MARK} [[tool:mcp__fixture__echo]] [[words:30]]`,
    );
    expect(textOfChunks(chunks)).toContain(`echo: ${MESSAGE_MARK}`);

    // The broken server keeps failing (and being retried) while the API serves.
    await waitFor(
      async () => api?.output.filter((line) => line.includes('MCP server unavailable')).length ?? 0,
      (count) => count >= 2,
      30_000,
    );
    expect((await fetch(`${api.baseUrl}/api/health`)).status).toBe(200);
    const log = api.output.join('\n');
    expect(log).toContain('"mcpServer":"broken"');
    expect(log).toMatch(
      /"mcpServer":"fixture".*MCP server available|MCP server available.*"mcpServer":"fixture"/,
    );
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain(MESSAGE_MARK);

    // SIGTERM while an MCP tool call runs: the API's own shutdown ends the process, cleanly.
    await client.json('PATCH', `/api/threads/${threadId}`, { tools: { mcp__fixture__slow: 'allow' } });
    const running = await client.send(threadId, 'wait [[tool:mcp__fixture__slow]] [[words:30]]');
    expect(running.status).toBe(200);
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      api?.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    api.child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(api.output.join('\n')).toContain('shutting down');
  }, 120_000);
});
