import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type MessagesApiServer, startMessagesApi } from '../../../api/test/support/messagesApiServer';
import { test } from '../fixtures';
import { AgentChat } from '../pages/AgentChat';
import { OwnServers } from './ownServers';

/**
 * A deployment with agent chats (A1) for the tests of a worker: the project's scripted Messages
 * API, a workspace (`projects`, a temporary directory with `app` inside), and an API and web app
 * of their own whose agent is the real Claude Code binary talking to that server. Guests may
 * start agent chats there (every test is a guest). Its tests' `baseURL` is its web app.
 */
export interface AgentDeployment {
  servers: OwnServers;
  messages: MessagesApiServer;
  /** The workspace's directory. */
  root: string;
}

export const agentTest = test.extend<{ agent: AgentChat }, { deployment: AgentDeployment }>({
  deployment: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern.
    async ({}, use) => {
      const messages = await startMessagesApi();
      const scratch = await mkdtemp(path.join(tmpdir(), 'e2e-agent-'));
      const root = path.join(scratch, 'projects');
      await mkdir(path.join(root, 'app'), { recursive: true });
      const servers = await OwnServers.start({
        AGENT_WORKSPACES: root,
        AGENT_BASE_URL: messages.baseUrl,
        AGENT_API_KEY: 'scripted',
        // Every test is a guest (a new browser context each).
        AGENT_GUESTS: 'true',
        RATE_LIMIT_GUESTS_PER_IP: '0',
        RATE_LIMIT_THREADS_PER_ACCOUNT: '0',
        RATE_LIMIT_SENDS_PER_ACCOUNT: '0',
        RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '0',
      });
      await use({ servers, messages, root });
      await servers.stop();
      await messages.close();
      // The binary may still be writing its session files as the API closes.
      await rm(scratch, { recursive: true, force: true, maxRetries: 5 });
    },
    { scope: 'worker', timeout: 180_000 },
  ],
  baseURL: async ({ deployment }, use) => {
    await use(deployment.servers.webOrigin);
  },
  agent: async ({ page }, use) => {
    await use(new AgentChat(page));
  },
});
