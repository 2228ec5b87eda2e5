import { schema } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readUntilWords,
  type StreamChunk,
  textOfMessage,
  waitFor,
} from './support/client';
import { freshDatabase, startTestApi, type TestApi } from './support/testApi';

/** Two API instances on one database: every rule must hold across them (Scale-out). */
let database: TestDatabase;
let instanceA: TestApi;
let instanceB: TestApi;
let viaA: ApiClient;
let viaB: ApiClient;

beforeAll(async () => {
  database = await freshDatabase();
  [instanceA, instanceB] = await Promise.all([startTestApi(database.url), startTestApi(database.url)]);
  viaA = await instanceA.client();
  viaB = viaA.via(instanceB.baseUrl);
});

afterAll(async () => {
  await Promise.all([instanceA?.close(), instanceB?.close()]);
  await database?.drop();
});

const SLOW = '[[words:400]] [[delay:25]]';

describe('two API instances on one database', () => {
  it('runs exactly one of two sends racing on an idle thread through different instances (Q5)', async () => {
    const threadId = await viaA.createThread();
    const responses = await Promise.all([viaA.send(threadId, `a ${SLOW}`), viaB.send(threadId, `b ${SLOW}`)]);
    expect(responses.map((response) => response.status).sort()).toEqual([200, 202]);
    await viaA.json('POST', `/api/threads/${threadId}/interrupt`);
    for (const response of responses) await response.body?.cancel();
  });

  it('lets only one of two racing claims run, one per instance', async () => {
    const threadId = await viaA.createThread();
    const running = await viaA.send(threadId, `first ${SLOW}`);
    await viaB.queued(threadId, 'queued [[words:3]]');
    await viaB.json('POST', `/api/threads/${threadId}/interrupt`);
    // The Stop paused the queue (S3); resumed, the two instances race for the head.
    await viaA.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    const claims = await Promise.all([
      viaA.fetch('POST', `/api/threads/${threadId}/queue/claim`),
      viaB.fetch('POST', `/api/threads/${threadId}/queue/claim`),
    ]);
    expect(claims.map((claim) => claim.status).sort()).toEqual([200, 409]);
    for (const claim of claims) await claim.body?.cancel();
    await running.body?.cancel();
  });

  it('stops a turn running on instance A when the interrupt reaches instance B (S1)', async () => {
    const threadId = await viaA.createThread();
    const reply = await viaA.send(threadId, `long ${SLOW}`);
    const turnId = reply.headers.get('x-turn-id') ?? '';
    const turns = schema.chatTurnRequests;
    const runnerOf = async () =>
      (await instanceB.runtime.database.db.select().from(turns).where(eq(turns.id, turnId)))[0]?.runnerId;
    // The turn runs on A, so B can only stop it through the interrupt signal.
    expect(await runnerOf()).toBe(instanceA.runtime.runnerId);
    expect(instanceA.runtime.runnerId).not.toBe(instanceB.runtime.runnerId);
    const chunks: StreamChunk[] = [];
    const reading = (async () => {
      for await (const chunk of iterateChunks(reply)) chunks.push(chunk);
    })();
    await waitFor(
      async () => chunks.filter((chunk) => chunk.type === 'text-delta').length,
      (words) => words >= 3,
    );
    const stop = await viaB.json<{ turn: { status: string } }>('POST', `/api/threads/${threadId}/interrupt`);
    expect(stop.status).toBe(200);
    expect(stop.body.turn.status).toBe('interrupted');
    await reading;
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { interrupted: true } });
    const detail = await viaB.detail(threadId);
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.messages[1]?.metadata.interrupted).toBe(true);
  });

  it('holds the queue cap across both instances (Q4)', async () => {
    const threadId = await viaA.createThread();
    const running = await viaA.send(threadId, `busy ${SLOW}`);
    const sends = Array.from({ length: 12 }, (_, i) =>
      (i % 2 === 0 ? viaA : viaB).send(threadId, `q${i}`, `q${i}`),
    );
    const statuses = (await Promise.all(sends)).map((response) => response.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(5);
    expect(statuses.filter((status) => status === 409)).toHaveLength(7);
    expect((await viaB.turnQueue(threadId)).items).toHaveLength(5);
    await viaB.json('POST', `/api/threads/${threadId}/interrupt`);
    await running.body?.cancel();
  });

  it('tells a tab on instance B about a turn started and settled on instance A', async () => {
    const threadId = await viaA.createThread();
    const controller = new AbortController();
    const events = await viaB.fetch('GET', `/api/threads/${threadId}/events`, undefined, {
      signal: controller.signal,
    });
    const seen: StreamChunk[] = [];
    const reading = (async () => {
      try {
        for await (const event of iterateChunks(events)) seen.push(event);
      } catch {
        // Aborted below.
      }
    })();
    await waitFor(
      async () => seen.length,
      (count) => count >= 1,
    );
    const { turnId } = await viaA.sendAndRead(threadId, 'hello [[words:3]]');
    await waitFor(
      async () => seen.map((event) => event.type),
      (types) => types.includes('turn.settled'),
    );
    expect(seen.find((event) => event.type === 'turn.started')).toMatchObject({ turn: { id: turnId } });
    controller.abort();
    await reading;
  });

  it('lets a reload on instance B follow a reply running on instance A to its end', async () => {
    const threadId = await viaA.createThread();
    const reply = await viaA.send(threadId, 'follow me [[words:60]] [[delay:20]]');
    const turnId = reply.headers.get('x-turn-id');
    await readUntilWords(reply, 5);
    const attached = await viaB.fetch('GET', `/api/threads/${threadId}/turns/${turnId}/stream`);
    expect(attached.status).toBe(200);
    const chunks = await readChunks(attached);
    expect(chunks[0]?.type).toBe('start');
    expect(chunks.at(-1)?.type).toBe('finish');
    const text = chunks
      .filter((chunk) => chunk.type === 'text-delta')
      .map((chunk) => chunk.delta)
      .join('');
    const detail = await viaB.detail(threadId);
    expect(text).toBe(textOfMessage(detail.messages[1]));
    expect(text.split(/\s+/)).toHaveLength(60);
  });

  it('queues a send on B behind a turn on A, and B can Stop & send it', async () => {
    const threadId = await viaA.createThread();
    const reply = await viaA.send(threadId, `long ${SLOW}`);
    await readUntilWords(reply, 3);
    const head = await viaB.queued(threadId, 'change of plan [[words:12]]');
    const sent = await viaB.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    expect(sent.status).toBe(200);
    const text = (await readChunks(sent))
      .filter((chunk) => chunk.type === 'text-delta')
      .map((chunk) => chunk.delta)
      .join('');
    expect(text.startsWith('(after interruption) You said: "change of plan".')).toBe(true);
  });
});
