import type { Attachment, ErrorBody, Turn, TurnQueue } from '@chat/contracts';
import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, textOfChunks } from './support/client';
import { pngBytes, uploaded } from './support/images';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

type Answer = { turn: Turn; turnQueue: TurnQueue };
const SLOW = '[[words:400]] [[delay:25]]';

/** A thread whose reply was stopped with `texts` waiting: the queue is paused, nothing claims. */
async function pausedQueue(
  texts: (string | { text: string; images: number })[],
): Promise<{ threadId: string; items: Turn[] }> {
  const threadId = await client.createThread();
  const reply = await client.send(threadId, `long answer ${SLOW}`);
  void reply.body?.cancel();
  const items: Turn[] = [];
  for (const entry of texts) {
    const { text, images } = typeof entry === 'string' ? { text: entry, images: 0 } : entry;
    const attachments: Attachment[] = [];
    for (let n = 0; n < images; n++) attachments.push(await uploaded(client, threadId, pngBytes(10 + n, 10)));
    const response = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text,
      ...(attachments.length ? { attachmentIds: attachments.map((image) => image.id) } : {}),
    });
    expect(response.status).toBe(202);
    items.push(((await response.json()) as { turn: Turn }).turn);
  }
  await client.json('POST', `/api/threads/${threadId}/interrupt`);
  return { threadId, items };
}

function merge(threadId: string, turnIds: string[], clientRequestId: string = crypto.randomUUID()) {
  return client.json<Answer & ErrorBody>('POST', `/api/threads/${threadId}/queue/merge`, {
    clientRequestId,
    turnIds,
  });
}

async function turnRows(threadId: string) {
  return await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
}

describe('merging waiting items into one (Q14)', () => {
  it('makes one item of their texts in queue order, blank lines between, at the place of the first', async () => {
    const { threadId, items } = await pausedQueue(['one', 'two', 'three', 'four']);
    const [one, two, three, four] = items as [Turn, Turn, Turn, Turn];
    // Named out of order, and not side by side: the queue's order decides, the first's place holds.
    const merged = await merge(threadId, [four.id, two.id]);
    expect(merged.status).toBe(200);
    expect(merged.body.turn).toMatchObject({ status: 'queued', text: 'two\n\nfour', steer: false });
    expect(merged.body.turnQueue.items.map((item) => item.text)).toEqual(['one', 'two\n\nfour', 'three']);
    expect(merged.body.turnQueue.items[1]?.id).toBe(merged.body.turn.id);

    const rows = await turnRows(threadId);
    for (const gone of [two, four]) {
      // Cancelled like a delete: the row keeps only that it existed.
      expect(rows.find((row) => row.id === gone.id)).toMatchObject({ status: 'cancelled', text: '' });
    }
    expect((await client.turnQueue(threadId)).items.map((item) => item.id)).toEqual([
      one.id,
      merged.body.turn.id,
      three.id,
    ]);

    // It runs as one message, where the first was.
    await client.json('DELETE', `/api/threads/${threadId}/queue/${one.id}`);
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    const claimed = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.headers.get('x-turn-id')).toBe(merged.body.turn.id);
    const text = textOfChunks(await readChunks(claimed));
    expect(text).toContain('two');
    expect(text).toContain('four');
  });

  it('frees places in a full queue: five become four, and a send fits again', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, `runs ${SLOW}`);
    void reply.body?.cancel();
    const items: Turn[] = [];
    for (const text of ['a', 'b', 'c', 'd', 'e']) items.push(await client.queued(threadId, text));
    expect((await client.send(threadId, 'sixth')).status).toBe(409);
    const merged = await merge(threadId, [items[3]?.id ?? '', items[4]?.id ?? '']);
    expect(merged.body.turnQueue.items.map((item) => item.text)).toEqual(['a', 'b', 'c', 'd\n\ne']);
    expect((await client.send(threadId, 'fits now')).status).toBe(202);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
  });

  it('keeps every image of the items, in order, up to four; past that it is refused and nothing changes', async () => {
    const { threadId, items } = await pausedQueue([
      { text: 'two pictures', images: 2 },
      { text: 'two more', images: 2 },
      { text: 'one too many', images: 1 },
    ]);
    const [first, second, third] = items as [Turn, Turn, Turn];
    const before = await client.turnQueue(threadId);
    const tooMany = await merge(threadId, [first.id, second.id, third.id]);
    expect([tooMany.status, tooMany.body.error.code]).toEqual([413, 'too_large']);
    expect(tooMany.body.error.message).toBe(
      'The merged message would carry more than 4 images and documents; a message can carry at most 4.',
    );
    expect(await client.turnQueue(threadId)).toEqual(before);

    const merged = await merge(threadId, [first.id, second.id]);
    expect(merged.status).toBe(200);
    expect(merged.body.turn.attachments.map((image) => image.id)).toEqual([
      ...first.attachments.map((image) => image.id),
      ...second.attachments.map((image) => image.id),
    ]);
    // The images stay: the merged item carries them (a delete would have removed them).
    for (const image of merged.body.turn.attachments) {
      expect((await client.fetch('GET', `/api/media/${image.id}`)).status).toBe(200);
    }
  });

  it('refuses a merged text past 32,000 characters with the reason, changing nothing', async () => {
    const { threadId, items } = await pausedQueue(['x'.repeat(20_000), 'y'.repeat(12_000)]);
    const before = await client.turnQueue(threadId);
    const refused = await merge(
      threadId,
      items.map((item) => item.id),
    );
    expect([refused.status, refused.body.error.code]).toEqual([413, 'too_large']);
    expect(refused.body.error.message).toBe('The merged message would be longer than 32000 characters.');
    expect(await client.turnQueue(threadId)).toEqual(before);
  });

  it('is idempotent by clientRequestId: a retry, even a racing one, answers the same item and makes nothing new', async () => {
    const { threadId, items } = await pausedQueue(['a', 'b', 'c']);
    const ids = [items[0]?.id ?? '', items[1]?.id ?? ''];
    const [first, racing] = await Promise.all([
      merge(threadId, ids, 'merge-1'),
      merge(threadId, ids, 'merge-1'),
    ]);
    expect([first.status, racing.status]).toEqual([200, 200]);
    expect(racing.body.turn.id).toBe(first.body.turn.id);
    const rowsAfter = (await turnRows(threadId)).length;
    const retry = await merge(threadId, ids, 'merge-1');
    expect(retry.status).toBe(200);
    expect(retry.body.turn.id).toBe(first.body.turn.id);
    expect(retry.body.turnQueue.items.map((item) => item.text)).toEqual(['a\n\nb', 'c']);
    expect(await turnRows(threadId)).toHaveLength(rowsAfter);
  });

  it('refuses what it cannot merge, with the reason, and changes nothing', async () => {
    const { threadId, items } = await pausedQueue(['a', 'b', 'c']);
    const [a, b, c] = items as [Turn, Turn, Turn];
    await client.json('DELETE', `/api/threads/${threadId}/queue/${c.id}`);
    const stranger = await api.client();
    const theirs = await stranger.createThread();
    const before = await client.turnQueue(threadId);
    const rowsBefore = (await turnRows(threadId)).length;

    const cases: [string[] | unknown, number, string][] = [
      [[a.id], 400, 'bad_request'],
      [[a.id, a.id], 400, 'bad_request'],
      [[a.id, 'not-an-id'], 400, 'bad_request'],
      ['a,b', 400, 'bad_request'],
      [[a.id, crypto.randomUUID()], 404, 'not_found'],
      [[a.id, c.id], 409, 'not_queued'],
    ];
    for (const [turnIds, status, code] of cases) {
      const refused = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/merge`, {
        clientRequestId: crypto.randomUUID(),
        turnIds,
      });
      expect([refused.status, refused.body.error.code]).toEqual([status, code]);
    }
    const noId = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/merge`, {
      turnIds: [a.id, b.id],
    });
    expect([noId.status, noId.body.error.code]).toEqual([400, 'bad_request']);
    const foreign = await client.json<ErrorBody>('POST', `/api/threads/${theirs}/queue/merge`, {
      clientRequestId: crypto.randomUUID(),
      turnIds: [a.id, b.id],
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
    expect(await client.turnQueue(threadId)).toEqual(before);
    expect(await turnRows(threadId)).toHaveLength(rowsBefore);
  });

  it('does not merge a failed head or a steer: they keep their place', async () => {
    const threadId = await client.createThread();
    const failing = await client.send(threadId, 'breaks [[words:100]] [[delay:20]] [[fail-after:20]]');
    const a = await client.queued(threadId, 'a');
    const b = await client.queued(threadId, 'b');
    await readChunks(failing);
    const failed = (await client.turnQueue(threadId)).items[0] as Turn;
    expect(failed.status).toBe('failed');
    const withFailed = await merge(threadId, [failed.id, a.id]);
    expect([withFailed.status, withFailed.body.error.code, withFailed.body.error.reason]).toEqual([
      409,
      'not_eligible',
      'head_failed',
    ]);

    const steerThread = await client.createThread();
    const reply = await client.send(steerThread, `runs ${SLOW}`);
    void reply.body?.cancel();
    const queued = await client.queued(steerThread, 'queued');
    const steer = await client.fetch('POST', `/api/threads/${steerThread}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'a steer',
      mode: 'steer',
    });
    const steerTurn = ((await steer.json()) as { turn: Turn }).turn;
    const withSteer = await merge(steerThread, [steerTurn.id, queued.id]);
    expect([withSteer.status, withSteer.body.error.code, withSteer.body.error.reason]).toEqual([
      409,
      'not_eligible',
      'steer_first',
    ]);
    expect((await client.turnQueue(steerThread)).items.map((item) => item.text)).toEqual([
      'a steer',
      'queued',
    ]);
    expect((await merge(threadId, [a.id, b.id])).status).toBe(200);
    await client.json('POST', `/api/threads/${steerThread}/interrupt`);
  });
});
