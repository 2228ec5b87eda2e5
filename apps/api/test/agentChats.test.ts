import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage, ContextMarker, Thread, WorkspaceList } from '@chat/contracts';
import { AGENT_COMPACTION_SUMMARY, COMPACTION_PART, turnErrorMessages } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_OFF_REASON } from '../src/agent/toolPolicy';
import { newEmail, type Refusal, signUp } from './support/accounts';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readChunksUntil,
  readRest,
  readUntilWords,
  textOfChunks,
  textOfMessage,
  untilIdle,
  waitFor,
} from './support/client';
import { type MessagesApiServer, startMessagesApi } from './support/messagesApiServer';
import { freshDatabase, startTestApi, type TestApi, turnRow } from './support/testApi';

/**
 * Agent chats (A1-A3, A8) through the real API: the workspaces a deployment configures, the chats
 * made on them (and the directories refused), and their turns run by the real Claude Code binary
 * against the scripted Messages API: its text, its tool uses as tool cards, a tool that needs an
 * approval denied by policy, its session kept between turns and resumed after a restart of the
 * API, and a binary that dies mid-turn ending the turn failed, not the API. A deployment without
 * workspaces has none of it.
 */

let database: Awaited<ReturnType<typeof freshDatabase>>;
let messages: MessagesApiServer;
let scratch: string;
let root: string;
let outside: string;
let dataDir: string;
let api: TestApi;
let person: ApiClient;

async function agentApi(extra: Record<string, string> = {}) {
  return await startTestApi(database.url, {
    AGENT_WORKSPACES: root,
    AGENT_BASE_URL: messages.baseUrl,
    AGENT_API_KEY: 'scripted',
    DATA_DIR: dataDir,
    ...extra,
  });
}

async function signedUp(target: TestApi): Promise<ApiClient> {
  const client = await target.client();
  expect((await signUp(client, newEmail())).status).toBe(200);
  return client;
}

async function workspaceId(client: ApiClient): Promise<string> {
  const { body } = await client.json<WorkspaceList>('GET', '/api/workspaces');
  const id = body.workspaces[0]?.id;
  if (!id) throw new Error('no workspace');
  return id;
}

async function agentChat(client: ApiClient): Promise<string> {
  const created = await client.json<Thread>('POST', '/api/threads', {
    workspaceId: await workspaceId(client),
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

beforeAll(async () => {
  database = await freshDatabase();
  messages = await startMessagesApi();
  scratch = await mkdtemp(join(tmpdir(), 'agent-chats-'));
  root = join(scratch, 'projects');
  outside = join(scratch, 'elsewhere');
  dataDir = join(scratch, 'data');
  await mkdir(join(root, 'app'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await symlink(outside, join(root, 'link-out'));
  api = await agentApi();
  person = await signedUp(api);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await messages?.close();
  await database?.drop();
  // The binary may still be writing its session files as its API closes.
  await rm(scratch, { recursive: true, force: true, maxRetries: 5 });
});

describe('agent chats off (no AGENT_WORKSPACES)', () => {
  it('lists no workspace, refuses an agent chat with 403 forbidden, and makes plain chats', async () => {
    const off = await startTestApi(database.url, { DATA_DIR: dataDir });
    try {
      const client = await signedUp(off);
      const listed = await client.json<WorkspaceList>('GET', '/api/workspaces');
      expect(listed).toMatchObject({ status: 200, body: { workspaces: [] } });
      const refused = await client.json<Refusal>('POST', '/api/threads', { workspaceId: 'anything' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden');
      const plain = await client.json<Thread>('POST', '/api/threads', {});
      expect(plain.body).toMatchObject({ runtime: 'chat' });
      expect(plain.body.workspace).toBeUndefined();
    } finally {
      await off.close();
    }
  }, 60_000);
});

describe('an agent chat on a deployment that no longer offers its workspace', () => {
  it('fails its turn in words that say why, never answering with the chat model', async () => {
    const threadId = await agentChat(person);
    const off = await startTestApi(database.url, { DATA_DIR: dataDir });
    try {
      const client = person.via(off.baseUrl);
      const { turnId, chunks } = await client.sendAndRead(threadId, 'hello again [[words:3]]');
      expect(JSON.stringify(chunks)).toContain(turnErrorMessages.agentWorkspaceGone);
      expect(textOfChunks(chunks)).toBe('');
      expect((await turnRow(off, turnId))?.status).toBe('failed');
    } finally {
      await off.close();
    }
  }, 60_000);
});

describe('agent chats on a configured workspace', () => {
  it('lists the workspace by id and name, never its path', async () => {
    const { status, body } = await person.json<WorkspaceList>('GET', '/api/workspaces');
    expect(status).toBe(200);
    expect(body.workspaces).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{16}$/), label: 'projects' }]);
    expect(JSON.stringify(body)).not.toContain(scratch);
  });

  it('does not let a guest start one unless the deployment allows it (A1)', async () => {
    const guest = await api.client();
    expect((await guest.json<WorkspaceList>('GET', '/api/workspaces')).body.workspaces).toEqual([]);
    const refused = await guest.json<Refusal>('POST', '/api/threads', {
      workspaceId: await workspaceId(person),
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
  });

  it('makes an agent chat on the workspace, or on a directory inside it', async () => {
    const id = await workspaceId(person);
    const created = await person.json<Thread>('POST', '/api/threads', { workspaceId: id });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ runtime: 'agent', workspace: { id, label: 'projects' } });
    const inside = await person.json<Thread>('POST', '/api/threads', {
      workspaceId: id,
      directory: join(root, 'app'),
    });
    expect(inside.body).toMatchObject({ runtime: 'agent', workspace: { id, label: 'app' } });
    const detail = await person.detail(created.body.id);
    expect(detail.thread).toMatchObject({ runtime: 'agent', workspace: { id } });
  });

  it.each([
    ['a directory outside the workspace', () => outside, 'outside'],
    ['a symlink out of it', () => join(root, 'link-out'), 'outside'],
    ['a path through a symlink out of it', () => join(root, 'link-out', '.'), 'outside'],
    ['a directory that does not exist', () => join(root, 'missing'), 'missing'],
    ['a relative path', () => 'app', 'not_absolute'],
  ])('refuses %s with 422 workspace_refused, and makes no chat', async (_name, directory, reason) => {
    const before = (await person.threadPage({ limit: 200 })).threads.length;
    const refused = await person.json<Refusal & { error: { reason: string } }>('POST', '/api/threads', {
      workspaceId: await workspaceId(person),
      directory: directory(),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'workspace_refused', reason });
    expect((await person.threadPage({ limit: 200 })).threads.length).toBe(before);
  });

  it('refuses a workspace not on the list with 404 not_found', async () => {
    const refused = await person.json<Refusal>('POST', '/api/threads', { workspaceId: 'not-a-workspace' });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
  });
});

describe('an agent chat runs the Claude Code agent', () => {
  it("streams the agent's reply; a plain chat of the same deployment keeps the chat model", async () => {
    const threadId = await agentChat(person);
    const { turnId, chunks } = await person.sendAndRead(threadId, 'hello agent [[words:4]]');
    expect(textOfChunks(chunks)).toBe('You said: "hello agent". word1 word2 word3 word4');
    const detail = await untilIdle(person, threadId);
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    // The session id, and the entry of its chain the reply ended at (A7).
    expect((await turnRow(api, turnId))?.resumeToken).toMatch(/^[0-9a-f-]{36}@[0-9a-f-]{36}$/);
    const plain = await person.createThread();
    const local = await person.sendAndRead(plain, 'hello model [[words:3]]');
    expect(textOfChunks(local.chunks)).not.toContain('You said: "hello model". word1');
  }, 60_000);

  it("shows the agent's tool use as a tool card with its output (A6)", async () => {
    const threadId = await agentChat(person);
    const { chunks } = await person.sendAndRead(threadId, 'run it [[tool:Bash]] [[words:3]]');
    expect(chunks).toContainEqual(
      expect.objectContaining({ type: 'tool-input-available', toolName: 'Bash', input: expect.anything() }),
    );
    expect(chunks).toContainEqual(
      expect.objectContaining({ type: 'tool-output-available', output: 'step 1' }),
    );
    const detail = await untilIdle(person, threadId);
    const parts = JSON.stringify(detail.messages[1]?.parts);
    expect(parts).toContain('Bash');
    expect(parts).toContain('step 1');
  }, 60_000);

  /** An agent chat on a directory of its own, and a message whose agent writes a file there. */
  async function writingChat() {
    const directory = join(root, `writes-${crypto.randomUUID()}`);
    await mkdir(directory);
    const created = await person.json<Thread>('POST', '/api/threads', {
      workspaceId: await workspaceId(person),
      directory,
    });
    const threadId = created.body.id;
    const { turnId, chunks } = await person.sendAndRead(threadId, 'write it [[tool:Write]] [[words:3]]');
    return { directory, threadId, turnId, chunks };
  }

  it("shows the agent compacting its conversation as the product's compaction notice (A6)", async () => {
    const threadId = await agentChat(person);
    // The model reports a full window: the agent compacts before its next call.
    await person.sendAndRead(threadId, 'a full window [[usage:990000]] [[words:2]]');
    const { chunks } = await person.sendAndRead(threadId, 'after it [[words:2]]');
    const progress = chunks.filter((chunk) => chunk.type === COMPACTION_PART);
    expect(progress.map((chunk) => (chunk as unknown as { data: { status: string } }).data.status)).toEqual([
      'compacting',
      'done',
    ]);
    expect(chunks.findIndex((chunk) => chunk.type === COMPACTION_PART)).toBeLessThan(
      chunks.findIndex((chunk) => chunk.type === 'text-delta'),
    );
    expect(textOfChunks(chunks)).toContain('You said: "after it"');
    // Not stored in the reply: it holds the agent's text only.
    const detail = await untilIdle(person, threadId);
    expect(JSON.stringify(detail.messages.at(-1)?.parts)).not.toContain(COMPACTION_PART);
    // The transcript keeps where it happened, for a page loaded later: a marker at that turn's
    // message, saying the summary is the agent's own.
    const markerOf = (message: ChatMessage) =>
      (message.metadata as { compaction?: ContextMarker } | undefined)?.compaction;
    const marked = detail.messages.filter((message) => markerOf(message));
    expect(marked.map((message) => textOfMessage(message))).toEqual(['after it [[words:2]]']);
    expect(marked[0] && markerOf(marked[0])).toMatchObject({
      kind: 'summary',
      summary: AGENT_COMPACTION_SUMMARY,
      error: null,
    });
  }, 90_000);

  it('asks the person before a tool the agent may not run alone: the queue waits, approve runs it (A5)', async () => {
    const { directory, threadId, turnId, chunks } = await writingChat();
    expect(chunks).toContainEqual(
      expect.objectContaining({ type: 'tool-input-available', toolName: 'Write' }),
    );
    const waiting = await person.detail(threadId);
    expect(waiting.turnQueue.activeTurn).toMatchObject({ id: turnId, status: 'awaiting_approval' });
    const [request] = waiting.hitl;
    expect(request).toMatchObject({ status: 'pending', toolName: 'Write', turnId });
    // H3: a message sent meanwhile waits in the queue.
    const queued = await person.queued(threadId, 'after the approval [[words:2]]');
    expect(queued.status).toBe('queued');
    expect(existsSync(join(directory, 'written.txt'))).toBe(false);
    const approved = await person.fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, {
      decision: 'approve',
    });
    expect(approved.status).toBe(200);
    const rest = await readChunks(approved);
    expect(rest).toContainEqual(expect.objectContaining({ type: 'tool-output-available' }));
    expect(textOfChunks(rest)).toContain('You said: "write it"');
    expect(readFileSync(join(directory, 'written.txt'), 'utf8')).toBe('written by the agent');
    expect((await turnRow(api, turnId))?.status).toBe('completed');
    const after = await untilIdle(person, threadId);
    expect(after.hitl).toMatchObject([{ status: 'approved' }]);
  }, 60_000);

  it('deny: the tool does not run, the agent reads that it was denied, the reply goes on (A5)', async () => {
    const { directory, threadId, turnId } = await writingChat();
    const [request] = (await person.detail(threadId)).hitl;
    const denied = await person.fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, {
      decision: 'deny',
    });
    expect(denied.status).toBe(200);
    const rest = await readChunks(denied);
    expect(rest).toContainEqual(expect.objectContaining({ type: 'tool-output-denied' }));
    expect(textOfChunks(rest)).toContain('You said: "write it"');
    expect(existsSync(join(directory, 'written.txt'))).toBe(false);
    expect((await turnRow(api, turnId))?.status).toBe('completed');
    expect((await untilIdle(person, threadId)).hitl).toMatchObject([{ status: 'denied' }]);
  }, 60_000);

  it('keeps the session between turns: the same token, and the agent remembers the chat (A2)', async () => {
    const threadId = await agentChat(person);
    const first = await person.sendAndRead(threadId, 'remember the lighthouse [[words:2]]');
    const second = await person.sendAndRead(threadId, 'what did I say? [[history]] [[words:2]]');
    expect(textOfChunks(second.chunks)).toContain('History: "remember the lighthouse"');
    const [one, two] = await Promise.all([turnRow(api, first.turnId), turnRow(api, second.turnId)]);
    // The same session (the token's id), each reply ending at its own place in it (A7).
    expect(two?.resumeToken?.split('@')[0]).toBe(one?.resumeToken?.split('@')[0]);
    expect(two?.resumeToken).not.toBe(one?.resumeToken);
  }, 60_000);

  it("edits fork the agent's session from before the message; the old version keeps its own (A7)", async () => {
    const threadId = await agentChat(person);
    const first = await person.sendAndRead(threadId, 'remember the lighthouse [[words:2]]');
    await person.sendAndRead(threadId, 'then the old question [[words:2]]');
    const before = await untilIdle(person, threadId);
    const oldBranch = before.thread.activeBranchId;
    const replaced = before.messages[2];
    expect(replaced?.role).toBe('user');
    const callsBefore = messages.calls.length;
    const version = await person.fetch('POST', `/api/threads/${threadId}/messages/${replaced?.id}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text: 'the new question [[history]] [[words:2]]',
    });
    expect(version.status).toBe(200);
    const versionTurn = version.headers.get('x-turn-id') ?? '';
    const forkedText = textOfChunks(await readChunks(version));
    // The forked session has the history before the edited message, and nothing of it.
    expect(forkedText).toContain('History: "remember the lighthouse"');
    expect(forkedText).not.toContain('old question');
    const forkedCalls = messages.calls.slice(callsBefore).map((call) => JSON.stringify(call.body.messages));
    expect(forkedCalls.some((body) => body.includes('the new question'))).toBe(true);
    expect(forkedCalls.some((body) => body.includes('remember the lighthouse'))).toBe(true);
    expect(forkedCalls.filter((body) => body.includes('old question'))).toEqual([]);
    const sessionOf = async (turnId: string) => (await turnRow(api, turnId))?.resumeToken?.split('@')[0];
    const oldSession = await sessionOf(first.turnId);
    expect(await sessionOf(versionTurn)).toMatch(/^[0-9a-f-]{36}$/);
    expect(await sessionOf(versionTurn)).not.toBe(oldSession);
    // A version of the version: its reply before is the first version's (a copy here), forked there.
    const nested = await untilIdle(person, threadId);
    const again = await person.fetch(
      'POST',
      `/api/threads/${threadId}/messages/${nested.messages[2]?.id}/versions`,
      {
        clientRequestId: crypto.randomUUID(),
        text: 'a third question [[history]] [[words:2]]',
      },
    );
    expect(textOfChunks(await readChunks(again))).toContain(
      'History: "remember the lighthouse" You said: "a third question"',
    );
    await untilIdle(person, threadId);
    // The old version, continued, still has its own history: the fork changed nothing of it.
    const switched = await person.json('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId: oldBranch,
    });
    expect(switched.status).toBe(200);
    const old = await person.sendAndRead(threadId, 'and now? [[history]] [[words:2]]');
    expect(textOfChunks(old.chunks)).toContain(
      'History: "remember the lighthouse" | "then the old question"',
    );
    expect(textOfChunks(old.chunks)).not.toContain('new question');
    expect(await sessionOf(old.turnId)).toBe(oldSession);
  }, 120_000);

  it('resumes the session from the kept token after the API restarts (A3, A8); approvals waiting then are carried out (A5)', async () => {
    const threadId = await agentChat(person);
    const first = await person.sendAndRead(threadId, 'remember the harbour [[words:2]]');
    const asking = await writingChat();
    const [request] = (await person.detail(asking.threadId)).hitl;
    const refusing = await writingChat();
    const [refused] = (await person.detail(refusing.threadId)).hitl;
    await api.close();
    api = await agentApi();
    const client = person.via(api.baseUrl);
    person = client;
    const again = await client.sendAndRead(threadId, 'and before? [[history]] [[words:2]]');
    expect(textOfChunks(again.chunks)).toContain('History: "remember the harbour"');
    expect((await turnRow(api, again.turnId))?.resumeToken?.split('@')[0]).toBe(
      (await turnRow(api, first.turnId))?.resumeToken?.split('@')[0],
    );
    // Approved after the restart: the session that asked is resumed and makes the call again,
    // allowed once; its output shows on the approved call's card, and the reply goes on.
    const late = await client.fetch('POST', `/api/threads/${asking.threadId}/hitl/${request?.id}`, {
      decision: 'approve',
    });
    expect(late.status).toBe(200);
    const rest = await readChunks(late);
    expect(rest).toContainEqual(
      expect.objectContaining({ type: 'tool-output-available', toolCallId: request?.toolCallId }),
    );
    expect(rest.filter((chunk) => chunk.type === 'tool-input-start')).toEqual([]);
    expect(textOfChunks(rest)).toContain('You said: "write it"');
    expect(readFileSync(join(asking.directory, 'written.txt'), 'utf8')).toBe('written by the agent');
    expect((await turnRow(api, asking.turnId))?.status).toBe('completed');
    const approvedChat = await untilIdle(client, asking.threadId);
    expect(approvedChat.hitl).toMatchObject([{ status: 'approved' }]);
    expect(JSON.stringify(approvedChat.messages.at(-1)?.parts)).toContain('written.txt');
    // Denied after the restart: the agent is told, the call never runs, the reply goes on.
    const denied = await client.fetch('POST', `/api/threads/${refusing.threadId}/hitl/${refused?.id}`, {
      decision: 'deny',
    });
    expect(denied.status).toBe(200);
    const after = await readChunks(denied);
    expect(after).toContainEqual(
      expect.objectContaining({ type: 'tool-output-denied', toolCallId: refused?.toolCallId }),
    );
    expect(textOfChunks(after)).toContain('You said: "write it"');
    expect(existsSync(join(refusing.directory, 'written.txt'))).toBe(false);
    expect((await turnRow(api, refusing.turnId))?.status).toBe('completed');
    expect((await untilIdle(client, refusing.threadId)).hitl).toMatchObject([{ status: 'denied' }]);
    const deniedCall = messages.calls.at(-1)?.body.messages;
    expect(JSON.stringify(deniedCall)).toContain('The person denied your Write call');
  }, 120_000);

  it("ends the turn failed in the product's words when the agent dies mid-turn; the API goes on", async () => {
    const directory = join(root, `dies-${Date.now()}`);
    await mkdir(directory);
    const created = await person.json<Thread>('POST', '/api/threads', {
      workspaceId: await workspaceId(person),
      directory,
    });
    const threadId = created.body.id;
    const reply = await person.send(threadId, 'a long one [[words:400]] [[delay:30]]');
    const turnId = reply.headers.get('x-turn-id') ?? '';
    // The agent of this chat: the one process working in its directory (started by this API).
    const pid = await waitFor(
      async () => processWorkingIn(directory),
      (found) => found !== undefined,
      30_000,
    );
    expect(pid).toBeDefined();
    await waitFor(
      async () => (await turnRow(api, turnId))?.partialText ?? '',
      (text) => text.length > 0,
      30_000,
    );
    process.kill(pid as number, 'SIGKILL');
    const text = await reply.text();
    expect(text).toContain(turnErrorMessages.agentStopped);
    const detail = await untilIdle(person, threadId);
    expect((await turnRow(api, turnId))?.status).toBe('failed');
    expect(detail.messages[1]?.metadata).toMatchObject({ failed: true });
    expect((await fetch(`${api.baseUrl}/api/health`)).status).toBe(200);
    // The failed message, edited and run again (Q11), starts the agent again from its kept token.
    const edited = await person.fetch('PATCH', `/api/threads/${threadId}/queue/${turnId}`, {
      text: 'are you back? [[words:2]]',
    });
    expect(edited.status).toBe(200);
    const claim = await person.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.status).toBe(200);
    expect(textOfChunks(await readChunks(claim))).toContain('You said: "are you back?"');
    expect(textOfMessage((await untilIdle(person, threadId)).messages.at(-1))).toContain('are you back?');
  }, 120_000);
});

describe("an agent chat's tool settings (A5)", () => {
  async function settingsChat() {
    const directory = join(root, `settings-${crypto.randomUUID()}`);
    await mkdir(directory);
    const created = await person.json<Thread>('POST', '/api/threads', {
      workspaceId: await workspaceId(person),
      directory,
    });
    return { directory, threadId: created.body.id };
  }
  const setTools = (threadId: string, tools: Record<string, string>) =>
    person.json<Refusal>('PATCH', `/api/threads/${threadId}`, { tools });
  /** The tools the agent offered the model on its last call. */
  const offered = () =>
    ((messages.calls.at(-1)?.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);

  it("lists the agent's own tools and takes settings for them only", async () => {
    const { threadId } = await settingsChat();
    const detail = await person.detail(threadId);
    expect(detail.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['Read', 'Write', 'Bash']));
    expect(detail.tools.find((tool) => tool.name === 'Bash')).toMatchObject({
      mode: 'ask',
      defaultMode: 'ask',
    });
    const refused = await setTools(threadId, { current_time: 'off' });
    expect(refused.status).toBe(400);
    expect((await setTools(threadId, { Bash: 'off' })).status).toBe(200);
    expect((await person.detail(threadId)).tools.find((tool) => tool.name === 'Bash')?.mode).toBe('off');
  });

  it('an off tool is not offered and never runs; allow runs without asking; ask asks every call', async () => {
    const { directory, threadId } = await settingsChat();
    await setTools(threadId, { Bash: 'off', Write: 'allow', Read: 'ask' });
    const off = await person.sendAndRead(threadId, 'run it [[tool:Bash]] [[words:2]]');
    expect(offered()).not.toContain('Bash');
    expect(off.chunks).not.toContainEqual(expect.objectContaining({ type: 'tool-output-available' }));
    expect(off.chunks).toContainEqual(expect.objectContaining({ type: 'tool-output-error' }));
    const allowed = await person.sendAndRead(threadId, 'write it [[tool:Write]] [[words:2]]');
    expect(allowed.chunks).toContainEqual(expect.objectContaining({ type: 'tool-output-available' }));
    expect(readFileSync(join(directory, 'written.txt'), 'utf8')).toBe('written by the agent');
    expect((await turnRow(api, allowed.turnId))?.status).toBe('completed');
    // Read runs without asking by the agent's own rules; set to ask, it waits for the person.
    const asking = await person.sendAndRead(threadId, 'read it [[tool:Read]] [[words:2]]');
    const waiting = await person.detail(threadId);
    expect(waiting.turnQueue.activeTurn).toMatchObject({ id: asking.turnId, status: 'awaiting_approval' });
    expect(waiting.hitl.at(-1)).toMatchObject({ status: 'pending', toolName: 'Read' });
    // Following the settings: Read allowed now approves the waiting call, and the reply goes on.
    expect((await setTools(threadId, { Read: 'allow', Bash: 'allow' })).status).toBe(200);
    await untilIdle(person, threadId);
    expect((await turnRow(api, asking.turnId))?.status).toBe('completed');
    // Bash on again: the session started without it is replaced, and it is offered and runs.
    const on = await person.sendAndRead(threadId, 'run it again [[tool:Bash]] [[words:2]]');
    expect(offered()).toContain('Bash');
    expect(on.chunks).toContainEqual(
      expect.objectContaining({ type: 'tool-output-available', output: 'step 1' }),
    );
  }, 120_000);

  it('a tool switched off while the agent works is refused at its next call (applied live)', async () => {
    const { threadId } = await settingsChat();
    const reply = await person.send(threadId, 'walk [[steps:3]] [[delay:800]] [[words:3]]');
    const stream = iterateChunks(reply);
    const before = await readChunksUntil(stream, (chunk) => chunk.type === 'tool-output-available');
    expect(before.at(-1)).toMatchObject({ output: 'step 1' });
    expect((await setTools(threadId, { Bash: 'off' })).status).toBe(200);
    const after = await readRest(stream);
    expect(after.filter((chunk) => chunk.type === 'tool-output-available')).toEqual([]);
    const refused = after.find((chunk) => chunk.type === 'tool-output-error') as
      | { errorText: string }
      | undefined;
    expect(refused?.errorText).toContain(TOOL_OFF_REASON);
    expect(textOfChunks(after)).toContain('You said: "walk"');
  }, 60_000);
});

describe('a hard kill of the API mid agent turn (A8)', () => {
  it('ends the turn through crash recovery like any turn; the next message resumes the kept session', async () => {
    const env = {
      DATABASE_URL: database.url,
      AGENT_WORKSPACES: root,
      AGENT_BASE_URL: messages.baseUrl,
      AGENT_API_KEY: 'scripted',
      DATA_DIR: dataDir,
      TURN_LEASE_MS: '1500',
    };
    const first = await startApiProcess(env);
    let second: ApiProcess | undefined;
    try {
      const client = person.via(first.baseUrl);
      const directory = join(root, `killed-${crypto.randomUUID()}`);
      await mkdir(directory);
      const created = await client.json<Thread>('POST', '/api/threads', {
        workspaceId: await workspaceId(client),
        directory,
      });
      const threadId = created.body.id;
      const kept = await client.sendAndRead(threadId, 'remember the lantern [[words:2]]');
      const reply = await client.send(threadId, 'a long one [[words:400]] [[delay:30]]');
      const turnId = reply.headers.get('x-turn-id') ?? '';
      const seen = await readUntilWords(reply, 20);
      expect(seen).toContain('You said: "a long one"');
      await first.kill();
      second = await startApiProcess(env);
      const again = client.via(second.baseUrl);
      const detail = await waitFor(
        () => again.detail(threadId),
        (d) => d.turnQueue.activeTurn === null,
        30_000,
      );
      expect((await turnRow(api, turnId))?.status).toBe('interrupted');
      expect(detail.messages.at(-1)?.metadata).toMatchObject({ interrupted: true, turnId });
      expect(textOfMessage(detail.messages.at(-1))).toContain('You said: "a long one"');
      const next = await again.sendAndRead(threadId, 'what came first? [[history]] [[words:2]]');
      expect(textOfChunks(next.chunks)).toContain('History: "remember the lantern"');
      // The same agent session, resumed from the token kept before the kill.
      const sessionOf = async (id: string) => (await turnRow(api, id))?.resumeToken?.split('@')[0];
      expect(await sessionOf(next.turnId)).toBe(await sessionOf(kept.turnId));
    } finally {
      await first.stop().catch(() => undefined);
      await second?.stop();
    }
  }, 240_000);
});

describe('the session pool (A2)', () => {
  let idling: TestApi;
  let bounded: TestApi;

  beforeAll(async () => {
    // Sessions closed 3 s after their turn; and one session at a time, kept ten minutes.
    idling = await agentApi({ AGENT_IDLE_MS: '3000' });
    bounded = await agentApi({ AGENT_SESSIONS: '1', AGENT_IDLE_MS: '600000' });
  }, 60_000);

  afterAll(async () => {
    await idling?.close();
    await bounded?.close();
  });

  async function chatIn(client: ApiClient, name: string) {
    const directory = join(root, `${name}-${crypto.randomUUID()}`);
    await mkdir(directory);
    const created = await client.json<Thread>('POST', '/api/threads', {
      workspaceId: await workspaceId(client),
      directory,
    });
    return { directory, threadId: created.body.id };
  }

  it('closes a session after its idle window; the next message resumes it', async () => {
    // The account that holds the workspace (A1: nobody else may start agent chats on it).
    const client = person.via(idling.baseUrl);
    const chat = await chatIn(client, 'idle');
    await client.sendAndRead(chat.threadId, 'remember the orchard [[words:2]]');
    expect(processWorkingIn(chat.directory)).toBeDefined();
    const gone = await waitFor(
      async () => processWorkingIn(chat.directory),
      (pid) => pid === undefined,
      30_000,
    );
    expect(gone).toBeUndefined();
    const again = await client.sendAndRead(chat.threadId, 'what was it? [[history]] [[words:2]]');
    expect(textOfChunks(again.chunks)).toContain('History: "remember the orchard"');
  }, 90_000);

  it('parks the least recently used idle session for a new one past the bound', async () => {
    const client = person.via(bounded.baseUrl);
    const first = await chatIn(client, 'first');
    const second = await chatIn(client, 'second');
    await client.sendAndRead(first.threadId, 'remember the meadow [[words:2]]');
    expect(processWorkingIn(first.directory)).toBeDefined();
    await client.sendAndRead(second.threadId, 'hello [[words:2]]');
    // The bound is one: the first chat's session was closed to make room.
    const parked = await waitFor(
      async () => processWorkingIn(first.directory),
      (pid) => pid === undefined,
      30_000,
    );
    expect(parked).toBeUndefined();
    const again = await client.sendAndRead(first.threadId, 'and? [[history]] [[words:2]]');
    expect(textOfChunks(again.chunks)).toContain('History: "remember the meadow"');
  }, 90_000);
});

/** The pid of the process whose working directory is `directory` (Linux /proc), if one. */
function processWorkingIn(directory: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === directory) return Number(entry);
    } catch {
      // Another user's process, or one that just ended.
    }
  }
  return undefined;
}
