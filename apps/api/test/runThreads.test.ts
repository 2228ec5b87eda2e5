import { PostgresStore } from '@mastra/pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunThreads } from '../src/chats/turns/driver/mastra/runThreads';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
useTestApi((started) => {
  ({ api } = started);
});

/** A store of its own on the test database's Mastra tables, wrapped like the driver's. */
let store: PostgresStore;
let threads: RunThreads;
let sql: postgres.Sql;

beforeAll(async () => {
  const url = api.runtime.database.url;
  store = new PostgresStore({
    id: 'run-threads-test',
    connectionString: url,
    schemaName: 'mastra',
    disableInit: true,
  });
  threads = new RunThreads();
  const memory = await store.getStore('memory');
  if (!memory) throw new Error('no memory store');
  threads.wrap(memory);
  sql = postgres(url, { max: 1, onnotice: () => {} });
});

afterAll(async () => {
  await store?.close();
  await sql?.end();
});

async function newThread(title: string) {
  const memory = await store.getStore('memory');
  const id = crypto.randomUUID();
  await memory?.saveThread({
    thread: { id, resourceId: 'owner-1', title, metadata: {}, createdAt: new Date(), updatedAt: new Date() },
  });
  return { id, memory: memory as NonNullable<typeof memory> };
}

/** Changes the row behind the store's back, as another reader would never see it change mid-run. */
const retitle = (id: string, title: string) =>
  sql`update mastra.mastra_threads set title = ${title} where id = ${id}`;

describe('memory thread rows during a run', () => {
  it('reads a running thread’s row once and answers copies until the run ends; outside a run every read asks', async () => {
    const { id, memory } = await newThread('first');
    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('first');
    await retitle(id, 'second');
    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('second');

    const release = threads.begin(id);
    const during = await memory.getThreadById({ threadId: id });
    expect(during?.title).toBe('second');
    await retitle(id, 'third');
    const again = await memory.getThreadById({ threadId: id });
    expect(again?.title).toBe('second');
    // A copy each time.
    if (again) again.title = 'changed by a caller';
    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('second');
    // The resource filter still applies.
    expect(await memory.getThreadById({ threadId: id, resourceId: 'someone-else' })).toBeNull();
    expect((await memory.getThreadById({ threadId: id, resourceId: 'owner-1' }))?.id).toBe(id);
    release();

    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('third');
  });

  it('drops the copy when the thread is written through the store, and keeps it while another run still uses it', async () => {
    const { id, memory } = await newThread('one');
    const first = threads.begin(id);
    const second = threads.begin(id);
    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('one');
    await memory.updateThread({ id, title: 'two', metadata: {} });
    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('two');
    first();
    await retitle(id, 'three');
    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('two');
    second();
    expect((await memory.getThreadById({ threadId: id }))?.title).toBe('three');
    await memory.deleteThread({ threadId: id });
    const third = threads.begin(id);
    expect(await memory.getThreadById({ threadId: id })).toBeNull();
    third();
  });
});
