import type { ChatMessage, ErrorBody, ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, textOfChunks, textOfMessage } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const texts = (detail: ThreadDetail) => detail.messages.map((message) => textOfMessage(message));
const userMessages = (detail: ThreadDetail) => detail.messages.filter((message) => message.role === 'user');

async function edit(
  threadId: string,
  messageId: string,
  text: string,
  clientRequestId: string = crypto.randomUUID(),
) {
  const response = await client.fetch('POST', `/api/threads/${threadId}/messages/${messageId}/versions`, {
    clientRequestId,
    text,
  });
  expect(response.status).toBe(200);
  return { turnId: response.headers.get('x-turn-id'), text: textOfChunks(await readChunks(response)) };
}

async function switchTo(threadId: string, branchId: string): Promise<ThreadDetail> {
  const response = await client.json<ThreadDetail>('PUT', `/api/threads/${threadId}/active-branch`, {
    branchId,
  });
  expect(response.status).toBe(200);
  return response.body;
}

async function rawBranch(branchId: string) {
  return await api.runtime.transcript.recall(branchId);
}

/** A thread with two exchanges: "first" and "second". */
async function twoTurnThread() {
  const threadId = await client.createThread();
  await client.sendAndRead(threadId, 'first [[words:4]]');
  await client.sendAndRead(threadId, 'second [[words:4]]');
  const detail = await client.detail(threadId);
  return { threadId, rootBranchId: detail.thread.activeBranchId, detail };
}

describe('editing a user message into a new version (B1, B2)', () => {
  it('creates a new branch with the history before the edit, the edit and a fresh reply; the original is unchanged', async () => {
    const { threadId, rootBranchId, detail } = await twoTurnThread();
    const original = await rawBranch(rootBranchId);
    const second = userMessages(detail)[1] as ChatMessage;

    const { text } = await edit(threadId, second.id, 'second, edited [[words:5]]');
    expect(text).toMatch(/^You said: "second, edited"\. \S+$/);

    const edited = await client.detail(threadId);
    expect(edited.thread.activeBranchId).not.toBe(rootBranchId);
    expect(texts(edited)).toEqual([
      'first [[words:4]]',
      textOfMessage(detail.messages[1]),
      'second, edited [[words:5]]',
      text,
    ]);
    // The shared history keeps the ids the person saw; the edit is version 2 of 2.
    expect(edited.messages[0]?.id).toBe(detail.messages[0]?.id);
    expect(edited.messages[1]?.id).toBe(detail.messages[1]?.id);
    expect(edited.messages[0]?.metadata.version).toBeUndefined();
    expect(edited.messages[2]?.metadata.version).toEqual({
      index: 2,
      count: 2,
      branchIds: [rootBranchId, edited.thread.activeBranchId],
    });

    // B1: the original branch is byte-for-byte what it was.
    expect(await rawBranch(rootBranchId)).toEqual(original);

    // B2: switching back shows the original with its own reply only, as version 1 of 2.
    const back = await switchTo(threadId, rootBranchId);
    expect(texts(back)).toEqual(texts(detail));
    expect(back.messages[2]?.metadata.version).toMatchObject({ index: 1, count: 2 });
    // B5: the choice persists.
    expect((await client.detail(threadId)).thread.activeBranchId).toBe(rootBranchId);
  });

  it('counts versions at both levels of nested forks', async () => {
    const { threadId, rootBranchId, detail } = await twoTurnThread();
    const [firstMessage, secondMessage] = userMessages(detail) as [ChatMessage, ChatMessage];

    await edit(threadId, secondMessage.id, 'second v2 [[words:3]]');
    const v2 = await client.detail(threadId);
    const secondV2 = userMessages(v2)[1] as ChatMessage;
    // Edit inside the edited branch: a third version of the same message.
    await edit(threadId, secondV2.id, 'second v3 [[words:3]]');
    const v3 = await client.detail(threadId);
    expect(userMessages(v3)[1]?.metadata.version).toMatchObject({ index: 3, count: 3 });
    expect(userMessages(v3)[0]?.metadata.version).toBeUndefined();

    // Edit the first message from inside the nested branch: two versions at the first level.
    await edit(threadId, firstMessage.id, 'first v2 [[words:4]]');
    const firstV2 = await client.detail(threadId);
    expect(texts(firstV2)).toEqual(['first v2 [[words:4]]', 'You said: "first v2".']);
    const version = userMessages(firstV2)[0]?.metadata.version;
    expect(version).toMatchObject({ index: 2, count: 2 });
    // Version 1 opens the branch the person last had selected under it: the nested one.
    expect(version?.branchIds[0]).toBe(v3.thread.activeBranchId);

    const backToV3 = await switchTo(threadId, version?.branchIds[0] ?? '');
    expect(userMessages(backToV3)[0]?.metadata.version).toMatchObject({ index: 1, count: 2 });
    expect(userMessages(backToV3)[1]?.metadata.version).toMatchObject({ index: 3, count: 3 });
    const branchIds = userMessages(backToV3)[1]?.metadata.version?.branchIds ?? [];
    expect(branchIds[0]).toBe(rootBranchId);
    expect(branchIds).toEqual([rootBranchId, v2.thread.activeBranchId, v3.thread.activeBranchId]);
  });

  it('replays the first answer for a retried edit instead of making a second version', async () => {
    const { threadId, detail } = await twoTurnThread();
    const second = userMessages(detail)[1] as ChatMessage;
    await edit(threadId, second.id, 'only once [[words:3]]', 'edit-1');
    const retry = await client.fetch('POST', `/api/threads/${threadId}/messages/${second.id}/versions`, {
      clientRequestId: 'edit-1',
      text: 'only once [[words:3]]',
    });
    expect(retry.status).toBe(202);
    await retry.text();
    const after = await client.detail(threadId);
    expect(userMessages(after)[1]?.metadata.version).toMatchObject({ count: 2 });
  });

  it('refuses unknown messages, assistant messages and bad bodies with nothing changed', async () => {
    const { threadId, detail } = await twoTurnThread();
    const assistant = detail.messages[1] as ChatMessage;
    const user = detail.messages[0] as ChatMessage;
    const attempts: Array<[string, unknown, number, string]> = [
      [
        `/api/threads/${threadId}/messages/no-such-message/versions`,
        { clientRequestId: 'a', text: 'x' },
        404,
        'not_found',
      ],
      [
        `/api/threads/${threadId}/messages/${assistant.id}/versions`,
        { clientRequestId: 'b', text: 'x' },
        404,
        'not_found',
      ],
      [
        `/api/threads/${threadId}/messages/${user.id}/versions`,
        { clientRequestId: 'c', text: '  ' },
        400,
        'bad_request',
      ],
      [`/api/threads/${threadId}/messages/${user.id}/versions`, { text: 'x' }, 400, 'bad_request'],
      [
        `/api/threads/${threadId}/messages/${user.id}/versions`,
        { clientRequestId: 'd', text: 'x'.repeat(32_001) },
        413,
        'too_large',
      ],
    ];
    for (const [path, body, status, code] of attempts) {
      const response = await client.json<ErrorBody>('POST', path, body);
      expect([response.status, response.body.error.code], path).toEqual([status, code]);
    }
    const switched = await client.json<ErrorBody>('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId: crypto.randomUUID(),
    });
    expect([switched.status, switched.body.error.code]).toEqual([404, 'not_found']);
    const malformed = await client.json<ErrorBody>('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId: 1,
    });
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'bad_request']);
    expect(await client.detail(threadId)).toEqual(detail);
  });

  it("refuses to switch to another thread's branch", async () => {
    const { threadId } = await twoTurnThread();
    const other = await twoTurnThread();
    const response = await client.json<ErrorBody>('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId: other.rootBranchId,
    });
    expect(response.status).toBe(404);
  });
});

describe('continuing and deleting on a branch (B3, B4)', () => {
  it('appends to the selected branch only, and deleting its latest turn leaves the sibling intact', async () => {
    const { threadId, rootBranchId, detail } = await twoTurnThread();
    const second = userMessages(detail)[1] as ChatMessage;
    await edit(threadId, second.id, 'edited [[words:3]]');
    const editedBranch = (await client.detail(threadId)).thread.activeBranchId;
    await client.sendAndRead(threadId, 'continue here [[words:4]]');
    const continued = await client.detail(threadId);
    expect(texts(continued).slice(-2)).toEqual(['continue here [[words:4]]', 'You said: "continue here".']);
    const rootBefore = await rawBranch(rootBranchId);
    expect(rootBefore).toHaveLength(4);

    // Only the latest user turn can go.
    const notLatest = await client.json<ErrorBody>(
      'DELETE',
      `/api/threads/${threadId}/messages/${second.id}`,
    );
    expect([notLatest.status, notLatest.body.error.code]).toEqual([404, 'not_found']);
    const edit1 = userMessages(continued)[1] as ChatMessage;
    const refused = await client.json<ErrorBody>('DELETE', `/api/threads/${threadId}/messages/${edit1.id}`);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'not_latest_turn']);
    expect(await client.detail(threadId)).toEqual(continued);

    const latest = userMessages(continued)[2] as ChatMessage;
    const deleted = await client.json<ThreadDetail>(
      'DELETE',
      `/api/threads/${threadId}/messages/${latest.id}`,
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body.thread.activeBranchId).toBe(editedBranch);
    expect(texts(deleted.body)).toEqual(texts(continued).slice(0, 4));
    expect(await rawBranch(rootBranchId)).toEqual(rootBefore);
  });

  it('removes a version whose own edit is deleted and shows the version before it', async () => {
    const { threadId, rootBranchId, detail } = await twoTurnThread();
    const second = userMessages(detail)[1] as ChatMessage;
    await edit(threadId, second.id, 'regret this [[words:3]]');
    const edited = await client.detail(threadId);
    const editMessage = userMessages(edited)[1] as ChatMessage;
    const deleted = await client.json<ThreadDetail>(
      'DELETE',
      `/api/threads/${threadId}/messages/${editMessage.id}`,
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body.thread.activeBranchId).toBe(rootBranchId);
    expect(texts(deleted.body)).toEqual(texts(detail));
    expect(deleted.body.messages[2]?.metadata.version).toBeUndefined();
  });
});

describe('deleting a message that has other versions', () => {
  it('shows the neighbouring version, which stays reachable, and keeps the turn marks of removed versions', async () => {
    const { threadId, rootBranchId, detail } = await twoTurnThread();
    const second = userMessages(detail)[1] as ChatMessage;
    await edit(threadId, second.id, 'second, edited [[words:8]]');
    const edited = await client.detail(threadId);
    await switchTo(threadId, rootBranchId);

    // On the original version, delete the message that was edited elsewhere.
    const deleted = await client.json<ThreadDetail>(
      'DELETE',
      `/api/threads/${threadId}/messages/${second.id}`,
    );
    expect(deleted.status).toBe(200);
    // The original no longer has a version of it: the edited version is shown, without controls.
    expect(deleted.body.thread.activeBranchId).toBe(edited.thread.activeBranchId);
    expect(texts(deleted.body)).toEqual(texts(edited));
    expect(userMessages(deleted.body)[1]?.metadata.version).toBeUndefined();
    expect(deleted.body.messages.every((message) => message.metadata.turnId)).toBe(true);
    // The original's tail is gone from memory; its first exchange is still there.
    expect(await rawBranch(rootBranchId)).toHaveLength(2);
  });
});

describe('branch changes and the queue (B1, B2, B4)', () => {
  it('answers thread_busy to edit, switch and delete while a turn runs, changing nothing', async () => {
    const { threadId, rootBranchId, detail } = await twoTurnThread();
    const second = userMessages(detail)[1] as ChatMessage;
    await edit(threadId, second.id, 'other version [[words:3]]');
    const before = await client.detail(threadId);
    const running = await client.send(threadId, 'busy [[words:400]] [[delay:25]]');

    const attempts: Array<[string, string, unknown]> = [
      [
        'POST',
        `/api/threads/${threadId}/messages/${second.id}/versions`,
        { clientRequestId: 'busy-1', text: 'x' },
      ],
      ['PUT', `/api/threads/${threadId}/active-branch`, { branchId: rootBranchId }],
      ['DELETE', `/api/threads/${threadId}/messages/${userMessages(before)[1]?.id}`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const response = await client.json<ErrorBody>(method, path, body);
      expect([response.status, response.body.error.code], `${method} ${path}`).toEqual([409, 'thread_busy']);
    }
    expect((await client.detail(threadId)).thread.activeBranchId).toBe(before.thread.activeBranchId);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await running.body?.cancel();
  });

  it('switches and deletes the latest turn with items queued, refuses an edit; the next claim runs on the shown version', async () => {
    const { threadId, rootBranchId, detail } = await twoTurnThread();
    const second = userMessages(detail)[1] as ChatMessage;
    await edit(threadId, second.id, 'other version [[words:3]]');
    const running = await client.send(threadId, 'busy [[words:400]] [[delay:25]]');
    const which = await client.queued(threadId, 'which version? [[history]] [[words:8]]');
    const after = await client.queued(threadId, 'and after? [[history]] [[words:8]]');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    // The Stop paused the queue (S3); it is resumed below, before the claim.
    await running.body?.cancel();

    // Edit into a new version stays refused while items wait (its reply would overtake them).
    const editing = await client.json<ErrorBody & { error: { message: string } }>(
      'POST',
      `/api/threads/${threadId}/messages/${second.id}/versions`,
      { clientRequestId: 'edit-while-queued', text: 'x' },
    );
    expect([editing.status, editing.body.error.code]).toEqual([409, 'thread_busy']);
    expect(editing.body.error.message).toBe('Send or delete the queued messages before editing a message.');

    // Switching and deleting the latest turn are allowed: nothing runs.
    const switched = await switchTo(threadId, rootBranchId);
    expect(texts(switched)).toEqual([
      'first [[words:4]]',
      texts(detail)[1],
      'second [[words:4]]',
      texts(detail)[3],
    ]);
    expect(switched.turnQueue.items.map((item) => item.id)).toEqual([which.id, after.id]);
    const deleted = await client.json<ThreadDetail>(
      'DELETE',
      `/api/threads/${threadId}/messages/${second.id}`,
    );
    expect(deleted.status).toBe(200);
    expect(deleted.body.thread.activeBranchId).not.toBe(rootBranchId);
    // "second" had another version: that one is shown now. Go back to the root, now one exchange.
    const root = await switchTo(threadId, rootBranchId);
    expect(texts(root)).toEqual(['first [[words:4]]', texts(detail)[1]]);

    // The queue runs on the version shown when it is claimed, with no handoff: the interrupted
    // reply is on the other version.
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.headers.get('x-turn-id')).toBe(which.id);
    expect(
      textOfChunks(await readChunks(claim)).startsWith('History: "first" You said: "which version?".'),
    ).toBe(true);
    const next = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(textOfChunks(await readChunks(next)).startsWith('History: "first" | "which version?"')).toBe(true);
    const final = await client.detail(threadId);
    expect(final.thread.activeBranchId).toBe(rootBranchId);
    expect(final.messages.map((message) => message.metadata.turnId).slice(2)).toEqual([
      which.id,
      which.id,
      after.id,
      after.id,
    ]);
  });
});

describe('model context of a branch', () => {
  it("never contains a sibling version's messages", async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'alpha [[words:3]]');
    await client.sendAndRead(threadId, 'original question [[words:3]]');
    const detail = await client.detail(threadId);
    const question = userMessages(detail)[1] as ChatMessage;
    await edit(threadId, question.id, 'edited question [[words:3]]');

    const { chunks } = await client.sendAndRead(threadId, 'what did I ask? [[history]]');
    const history = textOfChunks(chunks);
    expect(history).toContain('History: "alpha" | "edited question"');
    expect(history).not.toContain('original question');

    await switchTo(threadId, detail.thread.activeBranchId);
    const { chunks: rootChunks } = await client.sendAndRead(threadId, 'and here? [[history]]');
    const rootHistory = textOfChunks(rootChunks);
    expect(rootHistory).toContain('History: "alpha" | "original question"');
    expect(rootHistory).not.toContain('edited question');
  });
});
