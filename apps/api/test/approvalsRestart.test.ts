import type { TestDatabase } from '@chat/db/testing';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, readChunks, textOfChunks } from './support/client';
import { freshDatabase } from './support/testApi';

let database: TestDatabase;
const processes: ApiProcess[] = [];

beforeAll(async () => {
  database = await freshDatabase();
});

afterAll(async () => {
  await Promise.all(processes.map((api) => api.stop()));
  await database?.drop();
});

async function start(runtime: string): Promise<ApiProcess> {
  const api = await startApiProcess({
    DATABASE_URL: database.url,
    TURN_LEASE_MS: '600',
    CHAT_RUNTIME: runtime,
  });
  processes.push(api);
  return api;
}

// Part of the runtime driver contract (driverContract.test.ts): each driver resumes from what the
// host keeps, in another process.
describe.each(['mastra', 'ai-sdk'])('a pending approval survives the API going away (H3): %s', (runtime) => {
  it('is resumed by another process after a kill, and the lease rules leave the waiting turn alone', {
    // Two API processes start in it, each up to a minute on a loaded two-core machine.
    timeout: 240_000,
  }, async () => {
    const first = await start(runtime);
    const client = await ApiClient.signIn(first.baseUrl);
    const threadId = await client.createThread();
    const { turnId } = await client.sendAndRead(threadId, 'water the plants [[tool:save_note]] [[words:10]]');
    const [request] = (await client.detail(threadId)).hitl;
    expect(request).toMatchObject({ status: 'pending', turnId });

    await first.kill();
    const second = await start(runtime);
    const again = client.via(second.baseUrl);
    // Several sweeps of the new instance (every lease / 2 = 300 ms) find nothing to settle.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const waiting = await again.detail(threadId);
    expect(waiting.turnQueue.activeTurn).toMatchObject({ id: turnId, status: 'awaiting_approval' });
    expect(waiting.hitl).toMatchObject([{ id: request?.id, status: 'pending' }]);

    const approved = await again.fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, {
      decision: 'approve',
    });
    expect(approved.status).toBe(200);
    expect(approved.headers.get('x-turn-id')).toBe(turnId);
    const chunks = await readChunks(approved);
    expect(textOfChunks(chunks)).toContain('The tool save_note returned {"saved":true');

    const detail = await again.detail(threadId);
    expect(detail.turnQueue.activeTurn).toBeNull();
    expect(detail.notes.map((note) => note.text)).toEqual(['water the plants']);
    expect(detail.hitl).toMatchObject([{ id: request?.id, status: 'approved' }]);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const [turn] = await sql`select status, runner_id from chat_turn_requests where id = ${turnId}`;
      expect(turn).toEqual({ status: 'completed', runner_id: expect.stringMatching(/^api-/) });
    } finally {
      await sql.end();
    }
  });
});
