import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MessagesApiServer, startMessagesApi } from './support/messagesApiServer';

/**
 * The Claude Code binary the agent driver runs, as pnpm installed it, against our scripted
 * Messages API (no provider, no internet): one `query()` round trip reports `system/init` with its
 * session id, the assistant's message and a result. The binary writes its sessions and settings
 * under `CLAUDE_CONFIG_DIR` (and HOME), here a directory of the test's own, so runs never share one.
 */

let server: MessagesApiServer;
let home: string;
let workspace: string;

beforeAll(async () => {
  server = await startMessagesApi();
  home = await mkdtemp(join(tmpdir(), 'claude-home-'));
  workspace = await mkdtemp(join(tmpdir(), 'claude-workspace-'));
});

afterAll(async () => {
  await server?.close();
  await rm(home, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
});

describe('the Claude Code binary on a scripted Messages API', () => {
  it('answers one query: system/init with a session id, the assistant message, a successful result', async () => {
    const messages: SDKMessage[] = [];
    for await (const message of query({
      prompt: 'hello there [[words:3]]',
      options: {
        cwd: workspace,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          CLAUDE_CONFIG_DIR: home,
          ANTHROPIC_BASE_URL: server.baseUrl,
          ANTHROPIC_API_KEY: 'scripted',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
    })) {
      messages.push(message);
    }
    const init = messages.find((message) => message.type === 'system' && message.subtype === 'init');
    expect(init?.session_id).toMatch(/^[0-9a-f-]{36}$/);
    const assistant = messages.find((message) => message.type === 'assistant');
    expect(JSON.stringify(assistant?.type === 'assistant' ? assistant.message.content : null)).toContain(
      'You said: \\"hello there\\". word1 word2 word3',
    );
    const result = messages.at(-1);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', session_id: init?.session_id });
    // It went to our server, and only there.
    expect(server.calls.length).toBeGreaterThan(0);
  }, 120_000);
});
