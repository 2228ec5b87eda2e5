import type { ChatMessage, ErrorBody, MessageFeedback, ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { type ApiClient, iterateChunks, readChunks, type StreamChunk, waitFor } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const feedbackPath = (threadId: string, messageId: string | undefined) =>
  `/api/threads/${threadId}/messages/${messageId}/feedback`;

async function put(threadId: string, messageId: string | undefined, body: unknown, who = client) {
  return await who.json<{ messageId: string; feedback: MessageFeedback } & ErrorBody>(
    'PUT',
    feedbackPath(threadId, messageId),
    body,
  );
}

const feedbackShown = (detail: ThreadDetail) =>
  detail.messages.map((message) => message.metadata.feedback ?? null);

/** A thread with two exchanges; messages 1 and 3 are the replies. */
async function twoExchanges(): Promise<{ threadId: string; messages: ChatMessage[] }> {
  const threadId = await client.createThread();
  await client.sendAndRead(threadId, 'one [[words:3]]');
  await client.sendAndRead(threadId, 'two [[words:3]]');
  return { threadId, messages: (await client.detail(threadId)).messages };
}

describe('feedback on replies (H2)', () => {
  it('sets, changes and clears one rating per reply, shown in thread detail', async () => {
    const { threadId, messages } = await twoExchanges();
    const reply = messages[1]?.id;

    const up = await put(threadId, reply, { rating: 'up' });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ messageId: reply, feedback: { rating: 'up' } });
    expect(feedbackShown(await client.detail(threadId))).toEqual([null, { rating: 'up' }, null, null]);

    const down = await put(threadId, reply, { rating: 'down', comment: '  too vague  ' });
    expect(down.body.feedback).toEqual({ rating: 'down', comment: 'too vague' });
    await put(threadId, messages[3]?.id, { rating: 'up', comment: '' });
    expect(feedbackShown(await client.detail(threadId))).toEqual([
      null,
      { rating: 'down', comment: 'too vague' },
      null,
      { rating: 'up' },
    ]);

    expect((await client.fetch('DELETE', feedbackPath(threadId, reply))).status).toBe(204);
    expect(feedbackShown(await client.detail(threadId))).toEqual([null, null, null, { rating: 'up' }]);
    // Clearing twice is fine: there is simply nothing left.
    expect((await client.fetch('DELETE', feedbackPath(threadId, reply))).status).toBe(204);
  });

  it('follows the message into another version, where it is the same message', async () => {
    const { threadId, messages } = await twoExchanges();
    await put(threadId, messages[1]?.id, { rating: 'down', comment: 'kept' });
    const edit = await client.fetch('POST', `/api/threads/${threadId}/messages/${messages[2]?.id}/versions`, {
      clientRequestId: crypto.randomUUID(),
      text: 'two, edited [[words:3]]',
    });
    await readChunks(edit);
    const edited = await client.detail(threadId);
    expect(edited.messages[2]?.metadata.version).toMatchObject({ index: 2, count: 2 });
    expect(edited.messages[1]?.id).toBe(messages[1]?.id);
    expect(feedbackShown(edited)).toEqual([null, { rating: 'down', comment: 'kept' }, null, null]);
    // The copy in the new version takes feedback under the id the person sees.
    expect((await put(threadId, edited.messages[1]?.id, { rating: 'up' })).status).toBe(200);
    expect((await put(threadId, edited.messages[3]?.id, { rating: 'up' })).status).toBe(200);
    expect(feedbackShown(await client.detail(threadId))).toEqual([
      null,
      { rating: 'up' },
      null,
      { rating: 'up' },
    ]);
  });

  it('counts a comment in characters: 2,000 fit, 2,001 are 413 too_large and change nothing', async () => {
    const { threadId, messages } = await twoExchanges();
    const reply = messages[1]?.id;
    // Each emoji is two UTF-16 units but one character.
    const longest = '😀'.repeat(2_000);
    expect((await put(threadId, reply, { rating: 'down', comment: longest })).body.feedback.comment).toBe(
      longest,
    );

    const refused = await put(threadId, reply, { rating: 'up', comment: `${longest}x` });
    expect([refused.status, refused.body.error.code]).toEqual([413, 'too_large']);
    expect(feedbackShown(await client.detail(threadId))[1]).toEqual({ rating: 'down', comment: longest });
  });

  it('refuses user messages, unknown ratings, and foreign or unknown ids, changing nothing', async () => {
    const { threadId, messages } = await twoExchanges();
    await put(threadId, messages[1]?.id, { rating: 'up' });
    const other = await twoExchanges();
    const stranger = await api.client();

    const cases: Array<[string, Promise<{ status: number; body: ErrorBody }>, number, string]> = [
      ['user message', put(threadId, messages[0]?.id, { rating: 'up' }), 400, 'bad_request'],
      ['unknown rating', put(threadId, messages[1]?.id, { rating: 'meh' }), 400, 'bad_request'],
      ['no rating', put(threadId, messages[1]?.id, { comment: 'hm' }), 400, 'bad_request'],
      ['comment not text', put(threadId, messages[1]?.id, { rating: 'up', comment: 5 }), 400, 'bad_request'],
      ['unknown message', put(threadId, crypto.randomUUID(), { rating: 'up' }), 404, 'not_found'],
      ['message of another thread', put(threadId, other.messages[1]?.id, { rating: 'up' }), 404, 'not_found'],
      ['foreign thread', put(threadId, messages[1]?.id, { rating: 'down' }, stranger), 404, 'not_found'],
      ['unknown thread', put(crypto.randomUUID(), messages[1]?.id, { rating: 'down' }), 404, 'not_found'],
      ['foreign clear', stranger.json('DELETE', feedbackPath(threadId, messages[1]?.id)), 404, 'not_found'],
      [
        'clear on a user message',
        client.json('DELETE', feedbackPath(threadId, messages[0]?.id)),
        400,
        'bad_request',
      ],
    ];
    for (const [name, request, status, code] of cases) {
      const { status: got, body } = await request;
      expect([name, got, body.error.code]).toEqual([name, status, code]);
    }
    expect(feedbackShown(await client.detail(threadId))).toEqual([null, { rating: 'up' }, null, null]);
    expect(feedbackShown(await client.detail(other.threadId))).toEqual([null, null, null, null]);
  });

  it('tells every open tab through a feedback.changed event', async () => {
    const { threadId, messages } = await twoExchanges();
    const reply = messages[3]?.id;
    const controller = new AbortController();
    const response = await client.fetch('GET', `/api/threads/${threadId}/events`, undefined, {
      signal: controller.signal,
    });
    const events: StreamChunk[] = [];
    const reading = (async () => {
      try {
        for await (const event of iterateChunks(response)) events.push(event);
      } catch {
        // Aborted below.
      }
    })();
    await waitFor(
      async () => events.length,
      (count) => count >= 1,
    );

    await put(threadId, reply, { rating: 'down', comment: 'why' });
    await client.fetch('DELETE', feedbackPath(threadId, reply));
    const changes = await waitFor(
      async () => events.filter((event) => event.type === 'feedback.changed'),
      (found) => found.length >= 2,
    );
    expect(changes).toEqual([
      { type: 'feedback.changed', threadId, messageId: reply, feedback: { rating: 'down', comment: 'why' } },
      { type: 'feedback.changed', threadId, messageId: reply, feedback: null },
    ]);
    controller.abort();
    await reading;
  });
});
