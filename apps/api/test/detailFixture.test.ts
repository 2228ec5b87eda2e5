import { readFileSync, writeFileSync } from 'node:fs';
import type { ChatMessage, HitlRequest, ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks } from './support/client';
import { useTestApi } from './support/testApi';

/**
 * Thread detail of a long chat with versions returns exactly what it returned before detail stopped
 * reading every branch (issue 13). The fixture was captured from the code before that change, from
 * a chat built the same way through HTTP with the local model (deterministic replies); ids and
 * times are random, so both sides are normalised by order of appearance. Regenerate it only on a
 * deliberate change of the detail's shape: `UPDATE_DETAIL_FIXTURE=1 npx vitest run <this file>`, then `pnpm run format`.
 */
const FIXTURE = new URL('./fixtures/detail-300-messages.json', import.meta.url);

let client: ApiClient;
// The fixture is the detail of a chat the Mastra driver wrote (a reply resumed after an approval
// is a message of its own there; the AI SDK driver goes on in the call's message): the chat is
// built on that driver, so the comparison is of the detail's reading, not of a driver's shape.
useTestApi(
  (started) => {
    ({ client } = started);
  },
  { CHAT_RUNTIME: 'mastra' },
);

const turn = (label: string) => `${label} [[words:6]] [[delay:0]]`;

async function send(threadId: string, text: string): Promise<void> {
  await client.sendAndRead(threadId, text);
}

async function edit(threadId: string, messageId: string, text: string): Promise<void> {
  const response = await client.fetch('POST', `/api/threads/${threadId}/messages/${messageId}/versions`, {
    clientRequestId: crypto.randomUUID(),
    text,
  });
  expect(response.status).toBe(200);
  await readChunks(response);
}

async function switchTo(threadId: string, branchId: string): Promise<void> {
  const response = await client.fetch('PUT', `/api/threads/${threadId}/active-branch`, { branchId });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

const users = (detail: ThreadDetail) => detail.messages.filter((message) => message.role === 'user');
const nthUser = (detail: ThreadDetail, n: number) => users(detail)[n - 1] as ChatMessage;

/**
 * The chat: 3 versions of user message 10 (the third edited from the second: a nested fork), a
 * second version of a later message on the third version (a fork of a fork) after a tool call with
 * an approval and a Markdown reply, a reply stopped before its first word, feedback on replies, and a deleted latest turn; the shown
 * version has 300 messages.
 */
async function buildChat(): Promise<{ threadId: string; branches: string[] }> {
  const threadId = await client.createThread();
  for (let i = 1; i <= 30; i += 1) await send(threadId, turn(`Root message ${i}.`));
  const root = await client.detail(threadId);
  const rootBranch = root.thread.activeBranchId;

  await edit(threadId, nthUser(root, 10).id, turn('Message 10, second version.'));
  const second = await client.detail(threadId);
  for (let i = 11; i <= 20; i += 1) await send(threadId, turn(`Second version message ${i}.`));
  await edit(threadId, nthUser(second, 10).id, turn('Message 10, third version.'));
  const third = await client.detail(threadId);
  const thirdBranch = third.thread.activeBranchId;
  for (let i = 11; i <= 60; i += 1) await send(threadId, turn(`Third version message ${i}.`));

  // A tool call that waits for approval, approved.
  await send(threadId, 'remember the milk [[tool:save_note]]');
  const waiting = await client.detail(threadId);
  const request = waiting.hitl.find((entry) => entry.status === 'pending') as HitlRequest;
  const approved = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
    decision: 'approve',
  });
  expect(approved.status).toBe(200);
  await readChunks(approved);
  await send(threadId, 'Show me markdown [[markdown]]');

  const beforeFork = await client.detail(threadId);
  await edit(threadId, nthUser(beforeFork, 62).id, turn('Message 62, edited on the third version.'));
  // Stopped before its first word: the user message stays, marked, with no reply.
  const stopped = await client.send(threadId, 'Stop me early [[words:3]] [[delay:5000]]');
  expect(stopped.status).toBe(200);
  const stop = await client.fetch('POST', `/api/threads/${threadId}/interrupt`);
  expect(stop.status).toBe(200);
  await stop.arrayBuffer();
  await stopped.body?.cancel();
  let count = (await client.detail(threadId)).messages.length;
  for (let i = 63; count < 298; i += 1) {
    await send(threadId, turn(`Fourth branch message ${i}.`));
    count += 2;
  }
  const shown = await client.detail(threadId);
  expect(shown.messages).toHaveLength(298);
  const fourthBranch = shown.thread.activeBranchId;
  // The latest turn deleted, then another sent in its place.
  await send(threadId, turn('A message to delete.'));
  const withLatest = await client.detail(threadId);
  const latest = users(withLatest).at(-1) as ChatMessage;
  const deleted = await client.fetch('DELETE', `/api/threads/${threadId}/messages/${latest.id}`);
  expect(deleted.status).toBe(200);
  await deleted.arrayBuffer();
  while ((await client.detail(threadId)).messages.length < 300)
    await send(threadId, turn('The last message.'));

  // Feedback on a few replies, shared history and own messages alike.
  const final = await client.detail(threadId);
  const replies = final.messages.filter((message) => message.role === 'assistant');
  for (const [index, rating] of [
    [0, 'up'],
    [30, 'down'],
    [120, 'up'],
  ] as const) {
    const reply = replies[index] as ChatMessage;
    const rated = await client.fetch('PUT', `/api/threads/${threadId}/messages/${reply.id}/feedback`, {
      rating,
    });
    expect(rated.status).toBe(200);
  }
  return { threadId, branches: [rootBranch, second.thread.activeBranchId, thirdBranch, fourthBranch] };
}

/** Replaces ids and times by `<id:N>` / `<time:N>` in order of first appearance. */
function normalise(value: unknown): unknown {
  const seen = new Map<string, string>();
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
  const time = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
  const stand = (kind: string) => (match: string) => {
    let name = seen.get(match);
    if (!name) {
      name = `<${kind}:${seen.size}>`;
      seen.set(match, name);
    }
    return name;
  };
  const walk = (node: unknown, key?: string): unknown => {
    // Token counts include tool results, whose ids and times differ between runs: their presence
    // is compared, not their numbers.
    if (key === 'used' && typeof node === 'number') return '<tokens>';
    if (key === 'usage' && node && typeof node === 'object')
      return Object.fromEntries(Object.keys(node).map((name) => [name, '<tokens>']));
    if (typeof node === 'string') return node.replace(uuid, stand('id')).replace(time, stand('time'));
    if (Array.isArray(node)) return node.map((entry) => walk(entry));
    if (node && typeof node === 'object')
      return Object.fromEntries(Object.entries(node).map(([name, entry]) => [name, walk(entry, name)]));
    return node;
  };
  return walk(value);
}

describe('thread detail of a long chat with versions', () => {
  it('returns exactly what it returned before, for the shown version and after switching', async () => {
    const { threadId, branches } = await buildChat();
    const [rootBranch, secondBranch, thirdBranch, fourthBranch] = branches as [
      string,
      string,
      string,
      string,
    ];
    const captured: Record<string, unknown> = {};
    captured.shown = await client.detail(threadId);
    await switchTo(threadId, rootBranch);
    captured.root = await client.detail(threadId);
    await switchTo(threadId, secondBranch);
    captured.second = await client.detail(threadId);
    await switchTo(threadId, thirdBranch);
    captured.third = await client.detail(threadId);
    await switchTo(threadId, fourthBranch);
    captured.shownAgain = await client.detail(threadId);

    expect((captured.shown as ThreadDetail).messages).toHaveLength(300);
    const actual = normalise(captured);
    if (process.env.UPDATE_DETAIL_FIXTURE === '1') {
      writeFileSync(FIXTURE, `${JSON.stringify(actual, null, 2)}\n`);
    }
    expect(actual).toEqual(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  }, 240_000);
});
