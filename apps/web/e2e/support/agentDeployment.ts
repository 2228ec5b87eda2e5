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
 * of their own whose agent is the real Claude Code binary talking to that server. A workspace
 * belongs to one account (A1), so every test is the same signed-up account (its session cookie
 * in each test's browser context); guests get no agent chats there. Its tests' `baseURL` is its
 * web app.
 */
export interface AgentDeployment {
  servers: OwnServers;
  messages: MessagesApiServer;
  /** The workspace's directory. */
  root: string;
  /** The account's session, for each test's browser context. */
  signedIn: { cookies: StorageCookie[]; origins: [] };
}

type StorageCookie = {
  name: string;
  value: string;
  domain: string;
  path: string;
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite: 'Lax';
};

/** Signs an account up through the web app; its session cookies as a browser context takes them. */
async function signUp(webOrigin: string): Promise<StorageCookie[]> {
  const response = await fetch(`${webOrigin}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: webOrigin },
    body: JSON.stringify({
      email: `agent-${crypto.randomUUID()}@example.com`,
      password: 'agent-chats-password-1',
      name: 'Agent owner',
    }),
  });
  if (!response.ok) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
  return response.headers.getSetCookie().map((header) => {
    const [pair = ''] = header.split(';');
    const at = pair.indexOf('=');
    return {
      name: pair.slice(0, at).trim(),
      value: pair.slice(at + 1).trim(),
      domain: new URL(webOrigin).hostname,
      path: '/',
      expires: -1,
      httpOnly: true,
      secure: false,
      sameSite: 'Lax',
    };
  });
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
        RATE_LIMIT_GUESTS_PER_IP: '0',
        RATE_LIMIT_THREADS_PER_ACCOUNT: '0',
        RATE_LIMIT_SENDS_PER_ACCOUNT: '0',
        RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '0',
      });
      const signedIn = { cookies: await signUp(servers.webOrigin), origins: [] as [] };
      await use({ servers, messages, root, signedIn });
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
  storageState: async ({ deployment }, use) => {
    await use(deployment.signedIn);
  },
  agent: async ({ page }, use) => {
    await use(new AgentChat(page));
  },
});
