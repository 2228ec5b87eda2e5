import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, readChunks, readUntilWords } from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/**
 * ADR-059: a Stop, a thread read and the settle of the reply a Stop ends run on a few connections
 * of their own, so they answer while every connection of the main pool is held by transactions
 * (as a burst of sends holds them, each accept a transaction). Here every main-pool connection is
 * held by a transaction that waits for the test; the Stop and the read must answer before it lets
 * them go.
 */
let database: Awaited<ReturnType<typeof freshDatabase>>;
let api: TestApi;
/** A second instance on the same database: a Stop through it of a reply that runs on `api`. */
let other: TestApi;
let client: ApiClient;

/** The main pool's size (`createSql`'s default). */
const MAIN_POOL = 10;

beforeAll(async () => {
  database = await freshDatabase();
  [api, other] = await Promise.all([startTestApi(database.url), startTestApi(database.url)]);
  client = await api.client();
});

afterAll(async () => {
  await Promise.all([api?.close(), other?.close()]);
  await database?.drop();
});

/** Every connection of an instance's main pool in a transaction that waits until `release`. */
async function holdMainPool(instance: TestApi): Promise<{ release: () => Promise<void> }> {
  const { db } = instance.runtime.database;
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered = 0;
  const holding = Array.from({ length: MAIN_POOL }, () =>
    db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
      entered++;
      await released;
    }),
  );
  while (entered < MAIN_POOL) await new Promise((resolve) => setTimeout(resolve, 10));
  return {
    release: async () => {
      release();
      await Promise.all(holding);
    },
  };
}

/**
 * A read through `api` and a Stop through `stopVia` of a reply running on `api`, while every
 * main-pool connection of both instances is held: both must answer before the pools are let go.
 */
async function stopAndReadWithPoolsHeld(stopVia: TestApi): Promise<void> {
  const [toStop, toRead] = [await client.createThread(), await client.createThread()];
  expect((await client.send(toRead, 'Short [[words:3]]')).status).toBe(200);
  const running = await client.send(toStop, 'Long [[words:400]] [[delay:20]]');
  await readUntilWords(running, 2);
  const stopper = client.via(stopVia.baseUrl);
  // Its session known to the stopping instance before the pools are held (the session cache).
  expect((await stopper.json('GET', '/api/threads')).status).toBe(200);

  const pools = await Promise.all([...new Set([api, stopVia])].map((instance) => holdMainPool(instance)));
  let released = false;
  const release = async () => {
    released = true;
    await Promise.all(pools.map((pool) => pool.release()));
  };
  try {
    // The pool is full: a statement on it waits (else this test would show nothing).
    const waiting = api.runtime.database.db.execute(sql`select 1`).then(() => 'answered');
    waiting.catch(() => {});
    const fullPool = await Promise.race([
      waiting,
      new Promise((resolve) => setTimeout(() => resolve('waiting'), 300)),
    ]);
    expect(fullPool).toBe('waiting');

    const read = client.detail(toRead).then((detail) => ({ detail, released }));
    const stop = stopper
      .json<{ turn: { status: string } }>('POST', `/api/threads/${toStop}/interrupt`)
      .then((answer) => ({ answer, released }));
    // Let go after a while whatever happens, so the test ends either way.
    const letGo = setTimeout(() => void release(), 8_000);
    const [readResult, stopResult] = await Promise.all([read, stop]).finally(() => clearTimeout(letGo));
    expect(readResult.released).toBe(false);
    expect(readResult.detail.messages.length).toBeGreaterThan(0);
    expect(stopResult.released).toBe(false);
    expect(stopResult.answer.status).toBe(200);
    expect(stopResult.answer.body.turn.status).toBe('interrupted');
  } finally {
    await release();
  }
  await readChunks(running);
}

describe('Stop and a thread read while the main pool is held (ADR-059)', () => {
  it('both answer before the pool is let go, the reply stopped on its own instance', async () => {
    await stopAndReadWithPoolsHeld(api);
  });

  it('both answer before the pools are let go, the Stop through another instance', async () => {
    await stopAndReadWithPoolsHeld(other);
  });
});
