import type { ChatMessage, ThreadEvent } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { type ApiClient, iterateChunks, readChunks, readUntilWords, waitFor } from './support/client';
import { useTestApi } from './support/testApi';

let client: ApiClient;
useTestApi((started) => {
  ({ client } = started);
});

/** Follows a thread's events until `stop` is called. */
async function followEvents(threadId: string) {
  const controller = new AbortController();
  const response = await client.fetch('GET', `/api/threads/${threadId}/events`, undefined, {
    signal: controller.signal,
  });
  const events: ThreadEvent[] = [];
  const reading = (async () => {
    try {
      for await (const event of iterateChunks(response)) events.push(event as unknown as ThreadEvent);
    } catch {
      // Aborted by stop().
    }
  })();
  await waitFor(
    async () => events.length,
    (count) => count >= 1,
  );
  const settled = async (turnId: string) =>
    (await waitFor(
      async () => events.find((event) => event.type === 'turn.settled' && event.turn.id === turnId),
      (event) => event !== undefined,
    )) as ThreadEvent & { type: 'turn.settled' };
  return {
    settled,
    stop: async () => {
      controller.abort();
      await reading;
    },
  };
}

/** The messages of one turn as the thread detail shows them. */
async function detailMessagesOf(threadId: string, turnId: string): Promise<ChatMessage[]> {
  const { messages } = await client.detail(threadId);
  return messages.filter((message) => message.metadata.turnId === turnId);
}

describe('turn.settled carries the turn’s final messages', () => {
  it('gives exactly what the detail shows for completed and interrupted turns', async () => {
    const threadId = await client.createThread();
    const events = await followEvents(threadId);
    try {
      for (const text of ['first [[words:4]]', 'second [[words:6]]']) {
        const { turnId } = await client.sendAndRead(threadId, text);
        const { messages } = await events.settled(turnId);
        expect(messages).toHaveLength(2);
        expect(messages).toEqual(await detailMessagesOf(threadId, turnId));
      }

      const running = await client.send(threadId, 'long [[words:400]] [[delay:20]]');
      const turnId = running.headers.get('x-turn-id') ?? '';
      await readUntilWords(running, 3);
      const interrupted = await client.fetch('POST', `/api/threads/${threadId}/interrupt`);
      expect(interrupted.status).toBe(200);
      await readChunks(running);
      const { messages, turn } = await events.settled(turnId);
      expect(turn.status).toBe('interrupted');
      expect(messages?.[1]?.metadata).toMatchObject({ interrupted: true, turnId });
      expect(messages).toEqual(await detailMessagesOf(threadId, turnId));
    } finally {
      await events.stop();
    }
  });

  it('leaves them out for the first turn of an edited version (its version info is the detail’s)', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'original [[words:3]]');
    const [original] = (await client.detail(threadId)).messages;
    const events = await followEvents(threadId);
    try {
      const edit = await client.fetch('POST', `/api/threads/${threadId}/messages/${original?.id}/versions`, {
        clientRequestId: crypto.randomUUID(),
        text: 'edited [[words:3]]',
      });
      expect(edit.status).toBe(200);
      const turnId = edit.headers.get('x-turn-id') ?? '';
      await edit.text();
      const settled = await events.settled(turnId);
      expect(settled.turn.status).toBe('completed');
      expect(settled.messages).toBeUndefined();

      // The next turn on that version carries its messages again.
      const next = await client.sendAndRead(threadId, 'after the edit [[words:3]]');
      expect((await events.settled(next.turnId)).messages).toEqual(
        await detailMessagesOf(threadId, next.turnId),
      );
    } finally {
      await events.stop();
    }
  });
});
