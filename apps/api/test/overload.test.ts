import { connect } from 'node:net';
import { createSql, schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config';
import { StartSlots } from '../src/platform/startSlots';
import {
  APP_HEADERS,
  type ApiClient,
  readChunks,
  readUntilWords,
  textOfChunks,
  waitFor,
} from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * L1: past what the instance can start (or while its event loop is too far behind), a send is answered `503 overloaded` with `Retry-After` at
 * once and nothing is recorded; Stop, Stop & send and reads keep working. One start slot and no
 * line make "full" exact: a send holding the slot is kept inside its transaction by a lock this
 * test holds on its thread row.
 */
let database: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestApi;
let client: ApiClient;

beforeAll(async () => {
  database = await freshDatabase();
  api = await startTestApi(database.url, { SENDS_AT_ONCE: '1', SENDS_WAITING: '0' });
  client = await api.client();
});

afterAll(async () => {
  await api?.close();
  await database?.drop();
});

/** Holds `threadId`'s row lock from another connection until `release` is called. */
async function holdThreadLock(threadId: string): Promise<{ release: () => Promise<void> }> {
  const sql = createSql(database.url, { max: 1 });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const transaction = sql.begin(async (tx) => {
    await tx`select id from threads where id = ${threadId} for update`;
    locked();
    await released;
  });
  await isLocked;
  return {
    release: async () => {
      release();
      await transaction;
      await sql.end();
    },
  };
}

async function turnsWith(clientRequestId: string) {
  return await api.runtime.database.db
    .select()
    .from(schema.chatTurnRequests)
    .where(eq(schema.chatTurnRequests.clientRequestId, clientRequestId));
}

describe('a send past what the instance can start (L1)', () => {
  it('is answered 503 overloaded with Retry-After at once, records nothing, and the same request is accepted later', async () => {
    const [held, other] = [await client.createThread(), await client.createThread()];
    const lock = await holdThreadLock(held);
    // This send takes the only slot and waits for the lock inside its transaction.
    const first = client.send(held, 'First [[words:3]]');
    const holding = await waitFor(
      async () => api.runtime.services.http.starts.load.running,
      (running) => running === 1,
    );
    expect(holding).toBe(1);

    const clientRequestId = crypto.randomUUID();
    const refused = await client.send(other, 'Second [[words:3]]', clientRequestId);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    // Answered as every other answer is: the security headers too.
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    expect(refused.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('overloaded');
    expect(body.error.message).toMatch(/busy/);
    expect(await turnsWith(clientRequestId)).toEqual([]);

    await lock.release();
    const accepted = await first;
    expect(accepted.status).toBe(200);
    await readChunks(accepted);

    // Retried with the same clientRequestId: accepted once, as if the first try never happened.
    const retried = await client.send(other, 'Second [[words:3]]', clientRequestId);
    expect(retried.status).toBe(200);
    expect(textOfChunks(await readChunks(retried))).toContain('Second');
    expect(await turnsWith(clientRequestId)).toHaveLength(1);
  });

  it('is refused at the door, before its body is read: a send still sending it gets the same answer at once', async () => {
    const [held, other] = [await client.createThread(), await client.createThread()];
    const lock = await holdThreadLock(held);
    const first = client.send(held, 'First [[words:3]]');
    await waitFor(
      async () => api.runtime.services.http.starts.load.running,
      (running) => running === 1,
    );
    try {
      // Headers and the first bytes of a body that never ends: read through h3, the request guard
      // would wait for the rest before the start slots were even asked.
      const { head, body } = await rawRequest(
        api.baseUrl,
        [
          `POST /api/threads/${other}/turns HTTP/1.1`,
          'Host: 127.0.0.1',
          `Origin: ${APP_HEADERS.origin}`,
          'Content-Type: application/json',
          `Cookie: ${client.cookieHeader}`,
          'Content-Length: 1000',
          '',
          '{"clientRequestId":',
        ].join('\r\n'),
      );
      expect(head[0]).toBe('HTTP/1.1 503 Service Unavailable');
      const headers = new Map(
        head.slice(1).map((line) => {
          const at = line.indexOf(':');
          return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()];
        }),
      );
      expect(headers.get('retry-after')).toBe('1');
      expect(headers.get('content-type')).toBe('application/json');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('x-frame-options')).toBe('DENY');
      expect(headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
      const error = (JSON.parse(body) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('overloaded');
      expect(error.message).toMatch(/busy/);
      // Through the app as before: a send whose id is not plainly one is judged by the router.
      const odd = await client.fetch('POST', `/api/threads/${other}%2e/turns`, {
        clientRequestId: crypto.randomUUID(),
        text: 'Odd',
      });
      expect(odd.status).not.toBe(200);
      await odd.body?.cancel();
    } finally {
      await lock.release();
    }
    await readChunks(await first);
  });

  it('keeps Stop, Stop & send and reads working while sends are refused', async () => {
    const LONG = 'Long [[words:400]] [[delay:20]]';
    const [withQueue, toStop, held] = [
      await client.createThread(),
      await client.createThread(),
      await client.createThread(),
    ];
    const first = await client.send(withQueue, LONG);
    await readUntilWords(first, 2);
    const head = await client.queued(withQueue, 'Next [[words:6]]');
    const second = await client.send(toStop, LONG);
    await readUntilWords(second, 2);

    const lock = await holdThreadLock(held);
    const blocked = client.send(held, 'Blocked [[words:3]]');
    await waitFor(
      async () => api.runtime.services.http.starts.load.running,
      (running) => running === 1,
    );
    try {
      expect((await client.send(withQueue, 'Refused')).status).toBe(503);
      // Reads.
      expect((await client.json('GET', '/api/threads')).status).toBe(200);
      expect((await client.detail(withQueue)).turnQueue.items.map((turn) => turn.id)).toEqual([head.id]);
      // Stop.
      const stopped = await client.json<{ turn: { status: string } }>(
        'POST',
        `/api/threads/${toStop}/interrupt`,
      );
      expect(stopped.status).toBe(200);
      expect(stopped.body.turn.status).toBe('interrupted');
      // Stop & send: the running reply stops and the head streams.
      const sent = await client.fetch('POST', `/api/threads/${withQueue}/queue/${head.id}/send-now`);
      expect(sent.status).toBe(200);
      expect(textOfChunks(await readChunks(sent)).startsWith('(after interruption)')).toBe(true);
    } finally {
      await lock.release();
    }
    const unblocked = await blocked;
    expect(unblocked.status).toBe(200);
    await readChunks(unblocked);
  });
});

/**
 * Writes `request` as it is on a connection of its own and reads the answer's head and body (by
 * its Content-Length), without waiting for the request to end; fails after 5 s without one.
 */
async function rawRequest(baseUrl: string, request: string): Promise<{ head: string[]; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  try {
    return await new Promise((resolve, reject) => {
      let received = Buffer.alloc(0);
      setTimeout(() => reject(new Error('no answer within 5 s')), 5_000).unref();
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = received.subarray(0, end).toString('latin1').split('\r\n');
        const length = Number(/^content-length:\s*(\d+)$/im.exec(head.join('\n'))?.[1] ?? Number.NaN);
        const body = received.subarray(end + 4);
        if (body.length >= length) resolve({ head, body: body.subarray(0, length).toString('utf8') });
      });
      socket.write(request);
    });
  } finally {
    socket.destroy();
  }
}

/** Keeps this process's event loop busy (as a saturated API is) until the returned stop is called. */
function saturateLoop(): () => void {
  const timer = setInterval(() => {
    const until = Date.now() + 200;
    while (Date.now() < until) {
      // Busy: nothing else runs on the loop meanwhile.
    }
  }, 20);
  return () => clearInterval(timer);
}

describe('a send while the event loop is behind (L1)', () => {
  let loaded: TestApi;
  let loadedClient: ApiClient;

  beforeAll(async () => {
    loaded = await startTestApi(database.url, { SEND_LOOP_DELAY_MS: '100' });
    loadedClient = await loaded.client();
  });

  afterAll(async () => {
    await loaded?.close();
  });

  it('is answered 503 overloaded with every start slot free, Stop and reads keep answering, and the same request is accepted once the loop catches up', async () => {
    const [running, other] = [await loadedClient.createThread(), await loadedClient.createThread()];
    const reply = await loadedClient.send(running, 'Long [[words:400]] [[delay:20]]');
    await readUntilWords(reply, 2);

    const stopSaturating = saturateLoop();
    const clientRequestId = crypto.randomUUID();
    try {
      // Busy stretches run before this request is read, and the loop's own delay timer has fired
      // late after one of them (after only the first, the request can be read in the same turn of
      // the loop, before the delay is measured: the send was then accepted on a busy machine).
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refused = await loadedClient.send(other, 'Second [[words:3]]', clientRequestId);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('overloaded');
      expect(loaded.runtime.services.http.starts.load).toEqual({ running: 0, waiting: 0 });
      expect(await turnsWith(clientRequestId)).toEqual([]);
      // Reads and Stop take no slot and are not refused.
      expect((await loadedClient.json('GET', '/api/threads')).status).toBe(200);
      const stopped = await loadedClient.json<{ turn: { status: string } }>(
        'POST',
        `/api/threads/${running}/interrupt`,
      );
      expect(stopped.status).toBe(200);
      expect(stopped.body.turn.status).toBe('interrupted');
    } finally {
      stopSaturating();
    }
    await readChunks(reply);

    // Caught up: the same request, sent again as the web app does, is accepted once.
    const accepted = await waitFor(
      async () => {
        const response = await loadedClient.send(other, 'Second [[words:3]]', clientRequestId);
        if (response.status !== 200) await response.body?.cancel();
        return response;
      },
      (response) => response.status === 200,
      30_000,
    );
    expect(textOfChunks(await readChunks(accepted))).toContain('Second');
    expect(await turnsWith(clientRequestId)).toHaveLength(1);
  });
});

const NO_LOOP_BOUNDS = { maxLoopDelayMs: 0, maxLoopDelayBesideSendsMs: 0 };

describe('start slots', () => {
  it('lets a waiting request go on when a slot frees, and refuses one that waited too long or found the line full', async () => {
    const slots = new StartSlots({ ...NO_LOOP_BOUNDS, atOnce: 1, maxWaiting: 1, maxWaitMs: 60_000 });
    const release = await slots.acquire();
    const waiting = slots.acquire();
    expect(slots.load).toEqual({ running: 1, waiting: 1 });
    await expect(slots.acquire()).rejects.toMatchObject({ code: 'overloaded', status: 503 });
    release();
    const next = await waiting;
    expect(slots.load).toEqual({ running: 1, waiting: 0 });
    next();
    next();
    expect(slots.load).toEqual({ running: 0, waiting: 0 });

    const quick = new StartSlots({ ...NO_LOOP_BOUNDS, atOnce: 1, maxWaiting: 5, maxWaitMs: 20 });
    const held = await quick.acquire();
    await expect(quick.acquire()).rejects.toMatchObject({
      code: 'overloaded',
      headers: { 'retry-after': '1' },
    });
    expect(quick.load).toEqual({ running: 1, waiting: 0 });
    held();
  });

  it('refuse a lone send only when the loop is far behind, but one beside other sends (or waiting for them) when it is a little behind', async () => {
    const loop = { delayMs: 0 };
    const slots = new StartSlots(
      { atOnce: 1, maxWaiting: 5, maxWaitMs: 60_000, maxLoopDelayMs: 300, maxLoopDelayBesideSendsMs: 50 },
      loop,
    );
    // A lone send: only the far bound holds.
    loop.delayMs = 120;
    const first = await slots.acquire();
    // Beside it, the same delay refuses the next.
    await expect(slots.acquire()).rejects.toMatchObject({ code: 'overloaded', status: 503 });
    expect(slots.load).toEqual({ running: 1, waiting: 0 });

    // Caught up: two wait in line; the loop falls behind before their turn, so neither starts.
    loop.delayMs = 0;
    const waiting = [slots.acquire(), slots.acquire()];
    expect(slots.load).toEqual({ running: 1, waiting: 2 });
    loop.delayMs = 80;
    first();
    for (const refused of waiting) await expect(refused).rejects.toMatchObject({ code: 'overloaded' });
    expect(slots.load).toEqual({ running: 0, waiting: 0 });

    // Alone again (no burst of arrivals either: a while later) and under the far bound: taken.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const alone = await slots.acquire();
    alone();
    loop.delayMs = 301;
    await expect(slots.acquire()).rejects.toMatchObject({ code: 'overloaded' });
    expect(slots.load).toEqual({ running: 0, waiting: 0 });

    // With the loop on time, a waiting send starts when the slot frees, as before.
    loop.delayMs = 0;
    const holder = await slots.acquire();
    const next = slots.acquire();
    holder();
    (await next)();
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
  });

  it('count a send decided at the door once: it passes the door and then acquires as one arrival', async () => {
    const loop = { delayMs: 120 };
    const slots = new StartSlots(
      { atOnce: 2, maxWaiting: 0, maxWaitMs: 60_000, maxLoopDelayMs: 300, maxLoopDelayBesideSendsMs: 50 },
      loop,
    );
    // Two sends, one after the other: no burst (two arrivals, two slots), and alone each meets only
    // the far bound. Counted twice they would be four arrivals, a burst, and the second refused.
    for (let index = 0; index < 2; index++) {
      expect(slots.refusesAtOnce()).toBe(false);
      (await slots.acquire({ counted: true }))();
    }
    // The third within the same half second is a burst: refused at the door.
    expect(slots.refusesAtOnce()).toBe(true);
    // Every slot taken and no line: refused at the door too, whatever the loop.
    loop.delayMs = 0;
    await new Promise((resolve) => setTimeout(resolve, 600));
    const holders = [await slots.acquire(), await slots.acquire()];
    expect(slots.refusesAtOnce()).toBe(true);
    for (const release of holders) release();
    expect(slots.refusesAtOnce()).toBe(false);
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
  });

  it('by default, take on a burst of sends only while the loop is at most 35 ms behind: the streaming replies keep close to their pace, and a steady stream of sends is not refused (ADR-061)', async () => {
    // Sheds hold the loop at the bound while a burst lasts, so the bound is about what the burst
    // adds to every streaming reply's gaps (50 ms apart, at most 75 ms); 25 refused steady sends.
    const config = loadConfig({});
    const loop = { delayMs: 0 };
    const slots = new StartSlots(
      {
        atOnce: config.SENDS_AT_ONCE,
        maxWaiting: config.SENDS_WAITING,
        maxWaitMs: config.SEND_WAIT_MS,
        maxLoopDelayMs: config.SEND_LOOP_DELAY_MS,
        maxLoopDelayBesideSendsMs: config.SEND_LOOP_DELAY_BESIDE_SENDS_MS,
      },
      loop,
    );
    const first = await slots.acquire();
    // Beside a send starting, 30 ms behind is taken (one garbage collection may cost that).
    loop.delayMs = 30;
    const second = await slots.acquire();
    // 40 ms behind would make every streaming reply's next gap 90 ms: refused, to come again.
    loop.delayMs = 40;
    await expect(slots.acquire()).rejects.toMatchObject({ code: 'overloaded', status: 503 });
    expect(slots.load).toEqual({ running: 2, waiting: 0 });
    first();
    second();
    // A lone send, a while later, still meets only the far bound.
    await new Promise((resolve) => setTimeout(resolve, 600));
    (await slots.acquire())();
  });

  it('take more sends than the slots hold, arriving within half a second, as a burst: the lower bound holds with none starting', async () => {
    const loop = { delayMs: 0 };
    const slots = new StartSlots(
      { atOnce: 2, maxWaiting: 0, maxWaitMs: 60_000, maxLoopDelayMs: 300, maxLoopDelayBesideSendsMs: 50 },
      loop,
    );
    // Two arrive and start one after the other, each done at once: none is starting afterwards.
    for (let index = 0; index < 2; index++) (await slots.acquire())();
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
    // The third within the same half second, with the loop a little behind: a burst, refused.
    loop.delayMs = 120;
    await expect(slots.acquire()).rejects.toMatchObject({ code: 'overloaded', status: 503 });
    // Once the burst is over (no arrival for a while), a lone send meets only the far bound again.
    await new Promise((resolve) => setTimeout(resolve, 600));
    (await slots.acquire())();
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
  });
});
