import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from './fixtures';
import { agentTest } from './support/agentDeployment';
import { seriousViolations } from './support/axe';

/**
 * Agent chats (A1-A8) end to end: a deployment of its own whose API offers a workspace (a
 * temporary directory) and runs the real Claude Code binary against the project's scripted
 * Messages API (its replies quote the message; `[[tool:NAME]]`, `[[steps:N]]`, `[[delay:MS]]`,
 * `[[history]]` script it). The product's rules hold on the agent's turns: the queue, steers at a
 * tool boundary, approvals, Stop & send with its handoff, versions, and a restart of the API that
 * resumes the agent's session. The shared deployment has no workspace: nothing of it shows there.
 */

/** A directory of its own in the workspace, for an agent that writes a file there. */
async function ownDirectory(root: string, name: string): Promise<string> {
  const directory = path.join(root, `${name}-${crypto.randomUUID()}`);
  await mkdir(directory);
  return directory;
}

test.describe('agent chats off (no AGENT_WORKSPACES)', () => {
  test('nothing of agent chats shows: no picker on the start page, no badge on a chat', async ({
    chat,
    page,
  }) => {
    await chat.openStartPage();
    // The page makes its guest session as it loads, which may land just after the composer is
    // ready: the list is read once that session exists (a 401 before it is not the answer).
    let listed = await page.request.get('/api/workspaces');
    await expect
      .poll(async () => {
        listed = await page.request.get('/api/workspaces');
        return listed.status();
      })
      .toBe(200);
    expect(await listed.json()).toEqual({ workspaces: [] });
    await expect(page.getByTestId('agent-picker')).toHaveCount(0);
    await expect(page.getByRole('combobox', { name: 'New chat kind' })).toHaveCount(0);
    await chat.startThread('a plain chat [[words:2]]');
    await expect(chat.lastReply()).toContainText('You said');
    await expect(page.getByTestId('agent-badge')).toHaveCount(0);
    await expect(page.getByTestId('thread-agent-icon')).toHaveCount(0);
  });
});

agentTest.describe('agent chats on a workspace', () => {
  // One deployment (an API, a web app, the agent's binary) for the file: its tests run in turn.
  agentTest.describe.configure({ mode: 'default' });

  agentTest(
    'the start page starts one on the workspace: a refused directory says why, and the chat shows where it works (A1)',
    async ({ chat, agent, page, deployment }) => {
      await chat.openStartPage();
      await expect(agent.picker).toBeVisible();
      await expect(agent.directory).toHaveCount(0);
      await agent.pick('Agent on projects');
      // The agent's model is the deployment's: no model picker, no demo-model notice.
      await expect(page.getByTestId('model-picker')).toHaveCount(0);
      await expect(page.getByTestId('demo-model-notice')).toHaveCount(0);

      // A directory outside the workspace is refused in the API's words; nothing is lost.
      await agent.directory.fill(tmpdir());
      expect(await seriousViolations(page)).toEqual([]);
      await chat.composerInput.fill('hello agent [[words:3]]');
      await chat.composerInput.press('Enter');
      await expect(page.getByTestId('error-banner')).toContainText(
        'That directory is outside the workspace (symlinks count where they lead).',
      );
      await expect(chat.composerInput).toHaveValue('hello agent [[words:3]]');
      await expect(page).toHaveURL(/\/$/);

      await agent.directory.fill(path.join(deployment.root, 'app'));
      await chat.composerInput.press('Enter');
      await page.waitForURL(/\/chat\/[^/]+$/);
      const threadId = new URL(page.url()).pathname.split('/').pop() as string;
      await expect(chat.lastReply()).toContainText('You said: "hello agent". word1 word2 word3', {
        timeout: 30_000,
      });
      await chat.waitForIdle();
      // Where it works: the directory's name in the header, an agent's mark in the sidebar.
      await expect(agent.headerBadge).toHaveAccessibleName('Agent chat in app');
      await expect(agent.headerBadge).toContainText('app');
      await expect(agent.sidebarItem(threadId).getByTestId('thread-agent-icon')).toBeVisible();
      await expect(agent.sidebarItem(threadId).getByRole('link')).toHaveAccessibleName(
        /^Agent chat in app: /,
      );
      await expect(page.getByTestId('model-picker')).toHaveCount(0);
      expect(await seriousViolations(page)).toEqual([]);
    },
  );

  agentTest(
    "shows the agent's Bash call as a tool card: its command in the line, its output inside (A6)",
    async ({ chat, agent }) => {
      await agent.start('run it [[tool:Bash]] [[words:3]]');
      await expect(chat.lastReply()).toContainText('You said: "run it"', { timeout: 30_000 });
      const card = agent.card(agent.toolCards(chat.lastReply(), 'Bash'));
      await expect(card.outcome).toHaveText('Used Bash');
      await expect(card.detail).toHaveText('echo step 1');
      await card.toggle.click();
      await expect(card.result).toHaveText('step 1');
      // The reply is the agent's, not the chat model's.
      await expect(chat.lastReply().getByTestId('message-model')).toHaveText('· Claude Code agent');
      expect(await seriousViolations(chat.page)).toEqual([]);
    },
  );

  agentTest(
    'a message sent while the agent works waits in the Dock and runs next',
    async ({ chat, dock, agent }) => {
      await agent.start('a slow one [[words:40]] [[delay:100]]');
      await expect(chat.lastReply()).toContainText('You said: "a slow one"', { timeout: 30_000 });
      await chat.send('next in line [[words:2]]');
      await dock.expectTexts(['next in line [[words:2]]']);
      await expect(chat.repliesTo('next in line')).toHaveCount(1, { timeout: 30_000 });
      await expect(chat.reply(0)).toContainText('word40');
      await dock.expectTexts([]);
    },
  );

  agentTest("a steer joins the agent's turn at its next tool call (A4)", async ({ chat, dock, agent }) => {
    await agent.start('three steps [[steps:3]] [[delay:1200]] [[words:0]]');
    await expect(agent.toolCards(chat.lastReply(), 'Bash').first()).toBeVisible({ timeout: 30_000 });
    await chat.composerInput.fill('and list the files');
    await chat.composerInput.press('Control+Enter');
    await expect(dock.item(0).getByTestId('queue-item-steer')).toBeVisible();
    // Taken in at the next tool boundary: the transcript rolls there, the agent quotes it.
    await expect(chat.userMessages).toHaveCount(2, { timeout: 30_000 });
    await expect(chat.userMessages.last().getByTestId('steered-badge')).toHaveText('Steered');
    await expect(chat.lastReply()).toContainText('(steered) You added: "and list the files"', {
      timeout: 30_000,
    });
    await chat.waitForIdle();
    await dock.expectTexts([]);
  });

  agentTest(
    'a write the agent asks for: approved it runs, denied it does not, the reply goes on (A5)',
    async ({ chat, dock, agent, deployment }) => {
      const approved = await ownDirectory(deployment.root, 'approve');
      await agent.start('write it [[tool:Write]] [[words:3]]', approved);
      let card = agent.card(agent.toolCards(chat.lastReply(), 'Write'));
      await expect(card.outcome).toHaveText('Waiting for your approval', { timeout: 30_000 });
      await expect(card.card.getByTestId('tool-call-detail')).toHaveText(path.join(approved, 'written.txt'));
      // The queue waits for the decision.
      await chat.send('after the approval [[words:2]]');
      await dock.expectTexts(['after the approval [[words:2]]']);
      expect(existsSync(path.join(approved, 'written.txt'))).toBe(false);
      await card.approve.click();
      await expect(card.outcome).toHaveText('You approved running Write');
      await expect(chat.repliesTo('write it')).toHaveCount(1, { timeout: 30_000 });
      await expect(chat.repliesTo('after the approval')).toHaveCount(1, { timeout: 30_000 });
      expect(existsSync(path.join(approved, 'written.txt'))).toBe(true);

      const denied = await ownDirectory(deployment.root, 'deny');
      await agent.start('write that [[tool:Write]] [[words:3]]', denied);
      card = agent.card(agent.toolCards(chat.lastReply(), 'Write'));
      await expect(card.approve).toBeVisible({ timeout: 30_000 });
      await card.deny.click();
      await expect(card.outcome).toHaveText('You denied running Write');
      await expect(chat.lastReply()).toContainText('You said: "write that"', { timeout: 30_000 });
      await chat.waitForIdle();
      expect(existsSync(path.join(denied, 'written.txt'))).toBe(false);
    },
  );

  agentTest(
    'Stop & send interrupts the agent; the next message runs with the handoff (S4, S5)',
    async ({ chat, dock, agent }) => {
      await agent.start('a long story [[words:400]] [[delay:60]]');
      await expect(chat.lastReply()).toContainText('You said: "a long story"', { timeout: 30_000 });
      await chat.send('make it short [[words:2]]');
      await dock.expectTexts(['make it short [[words:2]]']);
      await dock.headAction('Stop & send').click();
      await expect(chat.interruptedBadge(chat.reply(0))).toBeVisible({ timeout: 15_000 });
      await expect(chat.reply(1)).toContainText('You said: "make it short"', { timeout: 30_000 });
      expect(await chat.replyText(chat.reply(1))).toMatch(/^\(after interruption\)/);
      await dock.expectTexts([]);
    },
  );

  agentTest(
    'an edited message makes a new version, answered by the agent (B1, A7)',
    async ({ chat, agent }) => {
      await agent.start('first try [[words:2]]');
      await expect(chat.lastReply()).toContainText('You said: "first try"', { timeout: 30_000 });
      await chat.waitForIdle();
      await chat.editMessage(chat.userMessages.first(), 'second try [[words:2]]');
      await expect(chat.versionLabel()).toHaveText('2 / 2');
      await expect(chat.lastReply()).toContainText('You said: "second try"', { timeout: 30_000 });
      await chat.waitForIdle();
      await chat.previousVersion();
      await expect(chat.lastReply()).toContainText('You said: "first try"');
    },
  );

  agentTest(
    "after a restart of the API the next message resumes the agent's session (A3, A8)",
    async ({ chat, agent, deployment }) => {
      await agent.start('remember the harbour [[words:2]]');
      await expect(chat.lastReply()).toContainText('You said: "remember the harbour"', { timeout: 30_000 });
      await chat.waitForIdle();

      await deployment.servers.killApi();
      await deployment.servers.startApi();
      await chat.reload();
      const before = deployment.messages.calls.length;
      await chat.send('and before? [[history]] [[words:2]]');
      // The agent read the earlier exchange from its resumed session: the product sent it only the new message.
      await expect(chat.lastReply()).toContainText('History: "remember the harbour"', { timeout: 60_000 });
      const resumed = deployment.messages.calls
        .slice(before)
        .map((call) => JSON.stringify(call.body.messages));
      expect(resumed.some((body) => body.includes('remember the harbour'))).toBe(true);
    },
  );
});
