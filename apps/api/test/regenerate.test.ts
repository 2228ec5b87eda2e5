import type { ChatMessage, ErrorBody, ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, textOfChunks, textOfMessage } from './support/client';
import { useTestApi } from './support/testApi';

let client: ApiClient;
useTestApi((started) => {
  ({ client } = started);
});

const texts = (detail: ThreadDetail) => detail.messages.map((message) => textOfMessage(message));
const lastOf = (detail: ThreadDetail, role: ChatMessage['role']) =>
  detail.messages.findLast((message) => message.role === role) as ChatMessage;

function regenerate(threadId: string, replyId: string, clientRequestId: string = crypto.randomUUID()) {
  return client.fetch('POST', `/api/threads/${threadId}/messages/${replyId}/regenerate`, { clientRequestId });
}

/** A thread with two exchanges; the local model's replies end in a random word. */
async function twoTurnThread() {
  const threadId = await client.createThread();
  await client.sendAndRead(threadId, 'first [[words:4]]');
  await client.sendAndRead(threadId, 'second [[words:4]]');
  return { threadId, detail: await client.detail(threadId) };
}

describe('regenerating the latest reply (issue 14)', () => {
  it('answers again as a new version of the user message before it; the earlier reply stays one switch away', async () => {
    const { threadId, detail } = await twoTurnThread();
    const reply = lastOf(detail, 'assistant');
    const asked = lastOf(detail, 'user');

    const response = await regenerate(threadId, reply.id);
    expect(response.status).toBe(200);
    expect(textOfChunks(await readChunks(response))).toMatch(/^You said: "second"\. /);

    const after = await client.detail(threadId);
    expect(after.thread.activeBranchId).not.toBe(detail.thread.activeBranchId);
    // Same conversation up to the question, the same question, a new answer.
    expect(texts(after).slice(0, 3)).toEqual(texts(detail).slice(0, 3));
    expect(after.messages).toHaveLength(4);
    const newAsked = lastOf(after, 'user');
    expect(textOfMessage(newAsked)).toBe('second [[words:4]]');
    expect(newAsked.metadata.version).toMatchObject({ index: 2, count: 2 });
    expect(lastOf(after, 'assistant').id).not.toBe(reply.id);
    // The first four messages of before and after share their ids up to the question.
    expect(after.messages.slice(0, 2).map((m) => m.id)).toEqual(detail.messages.slice(0, 2).map((m) => m.id));

    // Version 1 still holds the original reply, unchanged.
    const original = await client.json<ThreadDetail>('PUT', `/api/threads/${threadId}/active-branch`, {
      branchId: detail.thread.activeBranchId,
    });
    expect(original.status).toBe(200);
    expect(texts(original.body)).toEqual(texts(detail));
    expect(lastOf(original.body, 'user').id).toBe(asked.id);
    expect(lastOf(original.body, 'user').metadata.version).toMatchObject({ index: 1, count: 2 });
  });

  it('a retried request replays the first answer and makes no second version', async () => {
    const { threadId, detail } = await twoTurnThread();
    const reply = lastOf(detail, 'assistant');
    const first = await regenerate(threadId, reply.id, 'regen-once');
    const firstText = textOfChunks(await readChunks(first));
    const again = await regenerate(threadId, reply.id, 'regen-once');
    expect(again.status).toBeLessThan(300);
    await again.body?.cancel();
    const after = await client.detail(threadId);
    expect(lastOf(after, 'user').metadata.version).toMatchObject({ index: 2, count: 2 });
    expect(textOfMessage(lastOf(after, 'assistant'))).toBe(firstText);
  });

  it('refuses an earlier reply (not_latest_turn), a user message or an unknown id (not_found), changing nothing', async () => {
    const { threadId, detail } = await twoTurnThread();
    const attempts: Array<[string, number, string]> = [
      [(detail.messages[1] as ChatMessage).id, 409, 'not_latest_turn'],
      [lastOf(detail, 'user').id, 404, 'not_found'],
      [crypto.randomUUID(), 404, 'not_found'],
    ];
    for (const [id, status, code] of attempts) {
      const response = await client.json<ErrorBody>(
        'POST',
        `/api/threads/${threadId}/messages/${id}/regenerate`,
        { clientRequestId: crypto.randomUUID() },
      );
      expect([response.status, response.body.error.code], id).toEqual([status, code]);
    }
    const bad = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/messages/${lastOf(detail, 'assistant').id}/regenerate`,
      { clientRequestId: '' },
    );
    expect([bad.status, bad.body.error.code]).toEqual([400, 'bad_request']);
    expect(await client.detail(threadId)).toEqual(detail);
  });

  it('is refused like an edit while a turn runs or items wait (thread_busy), changing nothing', async () => {
    const { threadId, detail } = await twoTurnThread();
    const reply = lastOf(detail, 'assistant');
    const running = await client.send(threadId, 'busy [[words:400]] [[delay:25]]');
    const whileRunning = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/messages/${reply.id}/regenerate`,
      { clientRequestId: crypto.randomUUID() },
    );
    expect([whileRunning.status, whileRunning.body.error.code]).toEqual([409, 'thread_busy']);

    await client.queued(threadId, 'waiting [[words:3]]');
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await running.body?.cancel();
    const afterStop = await client.detail(threadId);
    const whileQueued = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/messages/${lastOf(afterStop, 'assistant').id}/regenerate`,
      { clientRequestId: crypto.randomUUID() },
    );
    expect([whileQueued.status, whileQueued.body.error.code]).toEqual([409, 'thread_busy']);
    expect((await client.detail(threadId)).thread.activeBranchId).toBe(detail.thread.activeBranchId);
  });
});
