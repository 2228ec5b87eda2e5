import { type ThreadSearchAnswer, type TurnQueue, turnErrorMessages } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks } from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let alice: ApiClient;
useTestApi((started) => {
  api = started.api;
  alice = started.client;
});

describe('search chats', () => {
  it('finds the owner’s chats by title and by message text, newest first, with a snippet', async () => {
    const byTitle = await alice.createThread('Notes on pelicans');
    const byMessage = await alice.createThread('Birds');
    await readChunks(await alice.send(byMessage, '[[words:3]] the long walk to Zanzibar and back again'));
    const other = await alice.createThread('Herons');

    const zanzibar = await alice.json<ThreadSearchAnswer>('GET', '/api/search?q=zANZIbar');
    expect(zanzibar.status).toBe(200);
    expect(zanzibar.body.results.map((result) => result.thread.id)).toEqual([byMessage]);
    expect(zanzibar.body.results[0]?.snippet).toContain('Zanzibar');

    const pelicans = await alice.json<ThreadSearchAnswer>('GET', '/api/search?q=pelican');
    expect(pelicans.body.results).toEqual([
      expect.objectContaining({ thread: expect.objectContaining({ id: byTitle }), snippet: null }),
    ]);

    // `%` and `_` are text, not wildcards.
    const wildcard = await alice.json<ThreadSearchAnswer>('GET', '/api/search?q=%25');
    expect(wildcard.body.results).toEqual([]);
    expect(other).toBeTruthy();
  });

  it('never shows another owner’s chats, and is bounded by limit', async () => {
    const bob = await api.client();
    await bob.createThread('Bob and the pelicans');
    const mine = await alice.json<ThreadSearchAnswer>('GET', '/api/search?q=pelican');
    expect(mine.body.results.every((result) => !result.thread.title.startsWith('Bob'))).toBe(true);

    for (let n = 0; n < 3; n++) await bob.createThread(`Bob list ${n}`);
    const limited = await bob.json<ThreadSearchAnswer>('GET', '/api/search?q=bob&limit=2');
    expect(limited.body.results).toHaveLength(2);
  });

  it('refuses a missing, empty, too long or malformed query with 400 bad_request', async () => {
    for (const query of ['', '?q=', '?q=%20%20', `?q=${'x'.repeat(201)}`, '?q=a&limit=0', '?q=a&limit=x']) {
      const { status, body } = await alice.json<{ error: { code: string } }>('GET', `/api/search${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code).toBe('bad_request');
    }
  });
});

describe('pausing the queue', () => {
  const pause = (threadId: string, paused: boolean) =>
    alice.json<{ turnQueue: TurnQueue }>('PUT', `/api/threads/${threadId}/queue/paused`, { paused });

  it('claims nothing while paused: a send is queued, a claim is refused with queue_paused; resume runs the head', async () => {
    const threadId = await alice.createThread();
    const paused = await pause(threadId, true);
    expect(paused.status).toBe(200);
    expect(paused.body.turnQueue.paused).toBe(true);

    // Idle, but paused: the send waits in the queue.
    const waiting = await alice.queued(threadId, '[[words:3]] wait for me');
    expect(waiting.status).toBe('queued');
    const claim = await alice.json<{ error: { code: string; reason: string } }>(
      'POST',
      `/api/threads/${threadId}/queue/claim`,
    );
    expect(claim.status).toBe(409);
    expect(claim.body.error).toMatchObject({ code: 'not_eligible', reason: 'queue_paused' });
    expect((await alice.detail(threadId)).turnQueue).toMatchObject({ paused: true, activeTurn: null });

    const resumed = await pause(threadId, false);
    expect(resumed.body.turnQueue.paused).toBe(false);
    const claimed = await alice.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.status).toBe(200);
    expect(claimed.headers.get('x-turn-id')).toBe(waiting.id);
    await readChunks(claimed);
  });

  it('lets Send now run the head it names even while paused, which ends the pause (S3)', async () => {
    const threadId = await alice.createThread();
    await pause(threadId, true);
    const head = await alice.queued(threadId, '[[words:3]] this one now');
    const response = await alice.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-turn-id')).toBe(head.id);
    await readChunks(response);
    expect((await alice.detail(threadId)).turnQueue.paused).toBe(false);
  });

  it('refuses a malformed body and a foreign thread, changing nothing', async () => {
    const threadId = await alice.createThread();
    const bad = await alice.json<{ error: { code: string } }>(
      'PUT',
      `/api/threads/${threadId}/queue/paused`,
      {
        paused: 'yes',
      },
    );
    expect(bad.status).toBe(400);
    const bob = await api.client();
    const foreign = await bob.json<{ error: { code: string } }>(
      'PUT',
      `/api/threads/${threadId}/queue/paused`,
      {
        paused: true,
      },
    );
    expect(foreign.status).toBe(404);
    expect((await alice.detail(threadId)).turnQueue.paused).toBe(false);
  });
});

describe('reply metadata', () => {
  it('names the model on replies and marks a reply that failed part-way', async () => {
    const threadId = await alice.createThread();
    await readChunks(await alice.send(threadId, '[[words:5]] fine'));
    await readChunks(await alice.send(threadId, '[[words:30]] [[fail-after:4]] broken'));
    const replies = (await alice.detail(threadId)).messages.filter((message) => message.role === 'assistant');
    expect(replies).toHaveLength(2);
    expect(replies[0]?.metadata).toMatchObject({ model: 'local' });
    expect(replies[0]?.metadata.failed).toBeUndefined();
    expect(replies[1]?.metadata).toMatchObject({ model: 'local', failed: true });
    expect(replies[1]?.metadata.error).toBe(turnErrorMessages.modelFailed);
  });
});
