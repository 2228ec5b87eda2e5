import type { ErrorBody, QueuePlace, Turn, TurnQueue } from '@chat/contracts';
import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readUntilWords,
  type StreamChunk,
  textOfChunks,
  waitFor,
} from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

type Answer = { turn: Turn; turnQueue: TurnQueue };
const SLOW = '[[words:400]] [[delay:25]]';

/** A thread with a long reply running and `texts` queued behind it, in that order. */
async function queueBehindReply(
  texts: string[],
): Promise<{ threadId: string; running: string; items: Turn[] }> {
  const threadId = await client.createThread();
  const reply = await client.send(threadId, `long answer ${SLOW}`);
  expect(reply.status).toBe(200);
  void reply.body?.cancel();
  const items: Turn[] = [];
  for (const text of texts) items.push(await client.queued(threadId, text));
  return { threadId, running: reply.headers.get('x-turn-id') ?? '', items };
}

/** The same, with the reply stopped: the queue is paused, so nothing claims while a test looks. */
async function pausedQueue(texts: string[]): Promise<{ threadId: string; items: Turn[] }> {
  const { threadId, items } = await queueBehindReply(texts);
  const stop = await client.json<{ queuePaused?: boolean }>('POST', `/api/threads/${threadId}/interrupt`);
  expect(stop.body.queuePaused).toBe(true);
  return { threadId, items };
}

function move(threadId: string, turnId: string, place: unknown, as: ApiClient = client) {
  return as.json<Answer & ErrorBody>('POST', `/api/threads/${threadId}/queue/${turnId}/move`, place);
}

async function order(threadId: string): Promise<string[]> {
  return (await client.turnQueue(threadId)).items.map((item) => item.text);
}

async function turnRows(threadId: string) {
  return await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.threadId, threadId));
}

const stopReply = (threadId: string) => client.json('POST', `/api/threads/${threadId}/interrupt`);

describe('moving a waiting item (Q13)', () => {
  it('puts an item before or after another, stores the order, and a later send still goes last', async () => {
    const { threadId, items } = await queueBehindReply(['a', 'b', 'c', 'd']);
    const [a, b, c, d] = items as [Turn, Turn, Turn, Turn];

    const first = await move(threadId, d.id, { beforeTurnId: a.id });
    expect(first.status).toBe(200);
    expect(first.body.turn).toMatchObject({ id: d.id, status: 'queued', text: 'd' });
    expect(first.body.turnQueue.items.map((item) => item.text)).toEqual(['d', 'a', 'b', 'c']);

    const second = await move(threadId, a.id, { afterTurnId: c.id });
    expect(second.body.turnQueue.items.map((item) => item.text)).toEqual(['d', 'b', 'c', 'a']);
    // Stored, not remembered: a fresh read (as another tab or a reload makes) shows it.
    expect(await order(threadId)).toEqual(['d', 'b', 'c', 'a']);

    await client.queued(threadId, 'e');
    expect(await order(threadId)).toEqual(['d', 'b', 'c', 'a', 'e']);
    expect(b.id).not.toBe(c.id);
    await stopReply(threadId);
  });

  it('runs the items in the order moved: the claim takes the new head', async () => {
    const { threadId, items } = await pausedQueue(['one [[words:5]]', 'two [[words:5]]']);
    const [one, two] = items as [Turn, Turn];
    await move(threadId, two.id, { beforeTurnId: one.id });
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    const claimed = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claimed.headers.get('x-turn-id')).toBe(two.id);
    expect(textOfChunks(await readChunks(claimed))).toBe('(after interruption) You said: "two".');
  });

  it('is idempotent: the same move again, or a move next to itself, changes nothing', async () => {
    const { threadId, items } = await pausedQueue(['a', 'b', 'c']);
    const [a, , c] = items as [Turn, Turn, Turn];
    const once = await move(threadId, c.id, { beforeTurnId: a.id });
    const twice = await move(threadId, c.id, { beforeTurnId: a.id });
    expect(twice.status).toBe(200);
    expect(twice.body.turnQueue).toEqual(once.body.turnQueue);
    const itself = await move(threadId, c.id, { afterTurnId: c.id });
    expect(itself.status).toBe(200);
    expect(itself.body.turnQueue).toEqual(once.body.turnQueue);
    // Already first among the items that may move: "before the first" is where it is.
    const inPlace = await move(threadId, a.id, { afterTurnId: c.id });
    expect(inPlace.body.turnQueue.items.map((item) => item.text)).toEqual(['c', 'a', 'b']);
  });

  it('refuses running, finished and deleted turns with not_queued, and changes nothing', async () => {
    const { threadId, running, items } = await queueBehindReply(['a', 'b', 'c']);
    const [a, b, c] = items as [Turn, Turn, Turn];
    await client.json('DELETE', `/api/threads/${threadId}/queue/${c.id}`);
    const before = await client.turnQueue(threadId);

    const refusals = [
      await move(threadId, running, { beforeTurnId: a.id }),
      await move(threadId, a.id, { afterTurnId: running }),
      await move(threadId, c.id, { beforeTurnId: a.id }),
      await move(threadId, b.id, { beforeTurnId: c.id }),
    ];
    for (const refused of refusals) {
      expect([refused.status, refused.body.error.code]).toEqual([409, 'not_queued']);
    }
    expect(refusals[3]?.body.error.message).toBe(
      'The message to place it next to is no longer in the queue.',
    );
    expect(await client.turnQueue(threadId)).toEqual(before);

    await stopReply(threadId);
    const finished = await move(threadId, running, { beforeTurnId: a.id });
    expect([finished.status, finished.body.error.code]).toEqual([409, 'not_queued']);
  });

  it('answers 404 for unknown ids and for another person’s thread or turn, changing nothing', async () => {
    const { threadId, items } = await pausedQueue(['a', 'b']);
    const [a, b] = items as [Turn, Turn];
    const stranger = await api.client();
    const { threadId: theirs, items: theirItems } = await (async () => {
      const id = await stranger.createThread();
      const reply = await stranger.send(id, `theirs ${SLOW}`);
      void reply.body?.cancel();
      const queued = [await stranger.queued(id, 'x'), await stranger.queued(id, 'y')];
      return { threadId: id, items: queued };
    })();
    const [x, y] = theirItems as [Turn, Turn];
    const unknown = crypto.randomUUID();
    const before = await client.turnQueue(threadId);

    const refusals = [
      await move(threadId, unknown, { beforeTurnId: a.id }),
      await move(threadId, b.id, { beforeTurnId: unknown }),
      await move(threadId, b.id, { beforeTurnId: x.id }),
      await move(threadId, x.id, { beforeTurnId: a.id }),
      await move(theirs, y.id, { beforeTurnId: x.id }),
      await move(threadId, 'not-an-id', { beforeTurnId: a.id }),
    ];
    for (const refused of refusals) {
      expect([refused.status, refused.body.error.code]).toEqual([404, 'not_found']);
    }
    expect(await client.turnQueue(threadId)).toEqual(before);
    expect((await stranger.turnQueue(theirs)).items.map((item) => item.text)).toEqual(['x', 'y']);
    await stranger.json('POST', `/api/threads/${theirs}/interrupt`);
  });

  it('refuses a malformed body with 400: neither or both neighbours, not an id, not JSON', async () => {
    const { threadId, items } = await pausedQueue(['a', 'b']);
    const [a, b] = items as [Turn, Turn];
    const before = await client.turnQueue(threadId);
    for (const body of [
      {},
      { beforeTurnId: a.id, afterTurnId: a.id },
      { beforeTurnId: 'a' },
      { afterTurnId: 7 },
    ]) {
      const refused = await move(threadId, b.id, body);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'bad_request']);
    }
    const raw = await client.fetch('POST', `/api/threads/${threadId}/queue/${b.id}/move`, '{"beforeTurnId":');
    expect(raw.status).toBe(400);
    expect(await client.turnQueue(threadId)).toEqual(before);
  });
});

describe('what keeps its place at the front (Q11, Q13)', () => {
  /** A failed head (its run failed) with `texts` waiting behind it. */
  async function failedHeadWith(texts: string[]): Promise<{ threadId: string; failed: Turn; items: Turn[] }> {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'breaks [[words:200]] [[delay:20]] [[fail-after:30]]');
    const items: Turn[] = [];
    for (const text of texts) items.push(await client.queued(threadId, text));
    await readChunks(reply);
    const queue = await waitFor(
      () => client.turnQueue(threadId),
      (current) => current.items[0]?.status === 'failed',
    );
    return { threadId, failed: queue.items[0] as Turn, items };
  }

  it('a failed head cannot be moved and nothing moves ahead of it; just after it is the front', async () => {
    const { threadId, failed, items } = await failedHeadWith(['a', 'b']);
    const [a, b] = items as [Turn, Turn];
    const before = await client.turnQueue(threadId);

    const moveFailed = await move(threadId, failed.id, { afterTurnId: b.id });
    const aheadOfIt = await move(threadId, b.id, { beforeTurnId: failed.id });
    for (const refused of [moveFailed, aheadOfIt]) {
      expect([refused.status, refused.body.error.code, refused.body.error.reason]).toEqual([
        409,
        'not_eligible',
        'head_failed',
      ]);
    }
    expect(await client.turnQueue(threadId)).toEqual(before);

    const afterIt = await move(threadId, b.id, { afterTurnId: failed.id });
    expect(afterIt.body.turnQueue.items.map((item) => item.id)).toEqual([failed.id, b.id, a.id]);
    // Edited, the failed head waits again: still first, the moved items after it in their order.
    await client.json('PATCH', `/api/threads/${threadId}/queue/${failed.id}`, { text: 'fixed' });
    expect((await client.turnQueue(threadId)).items.map((item) => item.text)).toEqual(['fixed', 'b', 'a']);
  });

  it('steers, pending or requeued, keep the front in the order sent; only after the last one may an item go', async () => {
    const { threadId, items } = await queueBehindReply(['a', 'b']);
    const [a, b] = items as [Turn, Turn];
    const steer = async (text: string) => {
      const response = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
        clientRequestId: crypto.randomUUID(),
        text,
        mode: 'steer',
      });
      expect(response.status).toBe(202);
      return ((await response.json()) as { turn: Turn }).turn;
    };
    const s1 = await steer('steer one');
    const s2 = await steer('steer two');
    expect((await client.turnQueue(threadId)).items.map((item) => [item.text, item.status])).toEqual([
      ['steer one', 'steer_pending'],
      ['steer two', 'steer_pending'],
      ['a', 'queued'],
      ['b', 'queued'],
    ]);

    const checkFront = async () => {
      const before = await client.turnQueue(threadId);
      const refusals = [
        await move(threadId, s2.id, { beforeTurnId: s1.id }),
        await move(threadId, s1.id, { afterTurnId: b.id }),
        await move(threadId, b.id, { beforeTurnId: s1.id }),
        await move(threadId, b.id, { afterTurnId: s1.id }),
      ];
      for (const refused of refusals) {
        expect([refused.status, refused.body.error.code, refused.body.error.reason]).toEqual([
          409,
          'not_eligible',
          'steer_first',
        ]);
      }
      expect(await client.turnQueue(threadId)).toEqual(before);
      const afterLast = await move(threadId, b.id, { afterTurnId: s2.id });
      expect(afterLast.status).toBe(200);
      return afterLast.body.turnQueue.items.map((item) => item.text);
    };
    expect(await checkFront()).toEqual(['steer one', 'steer two', 'b', 'a']);

    // The reply ends before a step took them in: they are requeued at the front, and keep it.
    await move(threadId, a.id, { beforeTurnId: b.id });
    await stopReply(threadId);
    const requeued = await client.turnQueue(threadId);
    expect(requeued.items.map((item) => [item.text, item.status])).toEqual([
      ['steer one', 'queued'],
      ['steer two', 'queued'],
      ['a', 'queued'],
      ['b', 'queued'],
    ]);
    expect(await checkFront()).toEqual(['steer one', 'steer two', 'b', 'a']);
  });
});

describe('two tabs moving at once (Q13)', () => {
  /** The order `moves` leave when applied one after another, as the rule says (no fixed items). */
  function applyMoves(start: string[], moves: { id: string; place: QueuePlace }[]): string[] {
    let current = [...start];
    for (const { id, place } of moves) {
      const neighbour = 'beforeTurnId' in place ? place.beforeTurnId : place.afterTurnId;
      if (neighbour === id) continue;
      const others = current.filter((item) => item !== id);
      const at = others.indexOf(neighbour) + ('beforeTurnId' in place ? 0 : 1);
      current = [...others.slice(0, at), id, ...others.slice(at)];
    }
    return current;
  }

  function permutations<T>(items: T[]): T[][] {
    if (items.length <= 1) return [items];
    return items.flatMap((item, index) =>
      permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
    );
  }

  it('serialise on the thread: the result is the moves applied one after another, every place distinct', async () => {
    const { threadId, items } = await pausedQueue(['a', 'b', 'c', 'd', 'e']);
    const ids = items.map((item) => item.id);
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    // The other tab is the same person in another tab: the same session.
    const otherTab = client.withCookie(client.cookieHeader);
    const moves: { id: string; place: QueuePlace; tab: ApiClient }[] = [
      { id: e, place: { beforeTurnId: a }, tab: client },
      { id: a, place: { afterTurnId: d }, tab: otherTab },
      { id: c, place: { beforeTurnId: b }, tab: client },
      { id: b, place: { afterTurnId: e }, tab: otherTab },
    ];
    const answers = await Promise.all(moves.map((one) => move(threadId, one.id, one.place, one.tab)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);

    const possible = permutations(moves).map((sequence) => applyMoves(ids, sequence).join());
    const now = (await client.turnQueue(threadId)).items.map((item) => item.id);
    expect(possible).toContain(now.join());
    const places = (await turnRows(threadId))
      .filter((row) => row.status === 'queued')
      .map((row) => row.queuePosition);
    expect(new Set(places).size).toBe(5);
  });

  it('every tab hears the new order (queue.changed)', async () => {
    const { threadId, items } = await pausedQueue(['a', 'b']);
    const [a, b] = items as [Turn, Turn];
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
      (count) => count > 0,
    );
    await move(threadId, b.id, { beforeTurnId: a.id });
    const changed = await waitFor(
      async () => events.filter((event) => event.type === 'queue.changed'),
      (found) => found.length > 1,
    );
    const last = changed.at(-1) as unknown as { turnQueue: TurnQueue };
    expect(last.turnQueue.items.map((item) => item.text)).toEqual(['b', 'a']);
    controller.abort();
    await reading;
  });
});

describe('Send now / Stop & send with moveToHead (Q9)', () => {
  const sendNow = (threadId: string, turnId: string, body?: unknown) =>
    client.fetch('POST', `/api/threads/${threadId}/queue/${turnId}/send-now`, body);

  it('moves the item to the head and does Stop & send in one request, with the handoff', async () => {
    const { threadId, running, items } = await queueBehindReply([
      'a [[words:5]]',
      'b [[words:5]]',
      'c [[words:5]]',
    ]);
    const [a, b, c] = items as [Turn, Turn, Turn];
    const plain = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/${c.id}/send-now`);
    expect([plain.status, plain.body.error.code]).toEqual([409, 'not_queue_head']);

    const sent = await sendNow(threadId, c.id, { moveToHead: true });
    expect(sent.status).toBe(200);
    expect(sent.headers.get('x-turn-id')).toBe(c.id);
    expect(textOfChunks(await readChunks(sent))).toBe('(after interruption) You said: "c".');
    const rows = await turnRows(threadId);
    expect(rows.find((row) => row.id === running)?.status).toBe('interrupted');
    // The others keep their order behind it (and run on after it).
    const queue = await waitFor(
      () => client.turnQueue(threadId),
      (current) => current.activeTurn === null,
    );
    expect(queue.items.map((item) => item.id)).toEqual([a.id, b.id]);
  });

  it('sends at once when idle; on the head it is plain Send now', async () => {
    const { threadId, items } = await pausedQueue(['a [[words:3]]', 'b [[words:3]]']);
    const [a, b] = items as [Turn, Turn];
    const sent = await sendNow(threadId, b.id, { moveToHead: true });
    expect(sent.headers.get('x-turn-id')).toBe(b.id);
    await readChunks(sent);
    const head = await sendNow(threadId, a.id, { moveToHead: true });
    expect(head.headers.get('x-turn-id')).toBe(a.id);
    await readChunks(head);
    expect((await client.turnQueue(threadId)).items).toEqual([]);
  });

  it('is refused, changing nothing, when the item cannot run next: a failed head, a steer in front, not waiting', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, `runs ${SLOW}`);
    await readUntilWords(reply, 2);
    const a = await client.queued(threadId, 'a');
    const steerResponse = await client.fetch('POST', `/api/threads/${threadId}/turns`, {
      clientRequestId: crypto.randomUUID(),
      text: 'a steer',
      mode: 'steer',
    });
    expect(steerResponse.status).toBe(202);
    const before = await client.turnQueue(threadId);

    const behindSteer = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/queue/${a.id}/send-now`,
      {
        moveToHead: true,
      },
    );
    expect([behindSteer.status, behindSteer.body.error.code, behindSteer.body.error.reason]).toEqual([
      409,
      'not_eligible',
      'steer_first',
    ]);
    const running = before.activeTurn as Turn;
    const notWaiting = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/queue/${running.id}/send-now`,
      { moveToHead: true },
    );
    expect([notWaiting.status, notWaiting.body.error.code]).toEqual([409, 'not_queued']);
    const malformed = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/queue/${a.id}/send-now`,
      {
        moveToHead: 'yes',
      },
    );
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'bad_request']);
    // Nothing was interrupted or moved.
    expect(await client.turnQueue(threadId)).toEqual(before);
    await stopReply(threadId);
    await reply.body?.cancel().catch(() => undefined);

    const failedThread = await client.createThread();
    const failing = await client.send(failedThread, 'breaks [[words:100]] [[delay:20]] [[fail-after:20]]');
    const waiting = await client.queued(failedThread, 'behind the failure');
    await readChunks(failing);
    const blocked = await waitFor(
      () => client.turnQueue(failedThread),
      (current) => current.items[0]?.status === 'failed',
    );
    const refused = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${failedThread}/queue/${waiting.id}/send-now`,
      { moveToHead: true },
    );
    expect([refused.status, refused.body.error.code, refused.body.error.reason]).toEqual([
      409,
      'not_eligible',
      'head_failed',
    ]);
    expect(await client.turnQueue(failedThread)).toEqual(blocked);
  });
});

describe('the handoff after a reorder (S5, Q13)', () => {
  it('follows the order the turns ran in, not the order they were sent in', async () => {
    // b was sent before c, but c is moved ahead and runs first; then b runs and is stopped.
    const { threadId, items } = await pausedQueue([`b ${SLOW}`, 'c [[words:5]]']);
    const [b, c] = items as [Turn, Turn];
    const first = await client.fetch('POST', `/api/threads/${threadId}/queue/${c.id}/send-now`, {
      moveToHead: true,
    });
    expect(textOfChunks(await readChunks(first))).toBe('(after interruption) You said: "c".');
    const second = await client.fetch('POST', `/api/threads/${threadId}/queue/${b.id}/send-now`);
    expect(second.headers.get('x-turn-id')).toBe(b.id);
    await readUntilWords(second, 2);
    await stopReply(threadId);
    await second.body?.cancel().catch(() => undefined);

    // The last reply to end was b's, cut off: the next turn gets the handoff.
    const next = await client.send(threadId, 'd [[words:5]]');
    expect(next.status).toBe(200);
    expect(textOfChunks(await readChunks(next))).toBe('(after interruption) You said: "d".');
  });
});
