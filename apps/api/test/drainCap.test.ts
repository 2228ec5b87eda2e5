import type { ThreadDetail } from '@chat/contracts';
import { schema } from '@chat/db';
import type { TestDatabase } from '@chat/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/client';
import { freshDatabase, startTestApi } from './support/testApi';

/**
 * Q15 under the per-account running cap: the server's drain claims by the viewer's rules, so the
 * cap counts its claims too. A database of its own, since every instance on it must have the cap.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await freshDatabase();
});

afterAll(async () => {
  await database?.drop();
});

const drained = (detail: ThreadDetail) =>
  detail.turnQueue.activeTurn === null && detail.turnQueue.items.length === 0;

describe('the running replies per account (the cap every claim counts)', () => {
  it('drains two chats of one account one reply at a time when the cap is 1', {
    timeout: 120_000,
  }, async () => {
    const capped = await startTestApi(database.url, { RATE_LIMIT_RUNNING_TURNS_PER_ACCOUNT: '1' });
    try {
      const person = await capped.client();
      const chats: string[] = [];
      for (let index = 0; index < 2; index += 1) {
        const threadId = await person.createThread();
        await person.json('PATCH', `/api/threads/${threadId}`, { drainMode: 'background' });
        chats.push(threadId);
      }
      const [a, b] = chats as [string, string];
      // b's queue waits paused, so its sends queue while a runs.
      await person.fetch('PUT', `/api/threads/${b}/queue/paused`, { paused: true });
      const first = await person.send(a, 'a1 [[words:40]] [[delay:30]]');
      expect(first.status).toBe(200);
      await first.body?.cancel();
      await person.queued(a, 'a2 [[words:4]]');
      await person.queued(b, 'b1 [[words:4]]');
      await person.queued(b, 'b2 [[words:4]]');
      await person.fetch('PUT', `/api/threads/${b}/queue/paused`, { paused: false });
      for (const threadId of chats) await waitFor(() => person.detail(threadId), drained, 45_000);
      const rows = await capped.runtime.database.db.select().from(schema.chatTurnRequests);
      expect(rows.map((row) => row.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
      // Never two replies of the account at once: each started after the one before it settled.
      const spans = rows
        .map((row) => [row.startedAt?.getTime() ?? 0, row.finishedAt?.getTime() ?? 0] as const)
        .sort((x, y) => x[0] - y[0]);
      for (let index = 1; index < spans.length; index += 1) {
        expect(spans[index]?.[0]).toBeGreaterThanOrEqual(spans[index - 1]?.[1] ?? 0);
      }
    } finally {
      await capped.close();
    }
  });
});
