import type { ChatMessage, ThreadDetail } from '@chat/contracts';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from './support/client';
import { runMigrationBackfill } from './support/migrationBackfill';
import { type TestApi, useTestApi } from './support/testApi';

/**
 * The lineage rows that thread detail finds versions by: written as messages come and go (settled
 * turns, new versions, deleted turns), and by the migration's backfill for threads that existed
 * before them. Both must give the same rows, nested forks included.
 */
let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const MIGRATION = new URL('../../../packages/db/drizzle/0006_message_lineage.sql', import.meta.url);

const turn = (label: string) => `${label} [[words:3]] [[delay:0]]`;
const users = (detail: ThreadDetail) => detail.messages.filter((message) => message.role === 'user');
const nthUser = (detail: ThreadDetail, n: number) => users(detail)[n - 1] as ChatMessage;

async function lineageRows(threadId: string) {
  const rows = await api.runtime.database.db.execute<Record<string, unknown>>(sql`
    select branch_id, message_id, parent_id, created_at from message_lineage
    where thread_id = ${threadId} order by branch_id, message_id`);
  return [...rows];
}

describe('lineage rows', () => {
  it('are written live as the backfill writes them, through nested forks and a deleted turn', async () => {
    const threadId = await client.createThread();
    for (let i = 1; i <= 4; i += 1) await client.sendAndRead(threadId, turn(`Root ${i}.`));
    const root = await client.detail(threadId);
    const rootBranch = root.thread.activeBranchId;

    const second = await client.editAndRead(threadId, nthUser(root, 2).id, turn('Two, second version.'));
    await client.sendAndRead(threadId, turn('Second 3.'));
    const third = await client.editAndRead(threadId, nthUser(second, 2).id, turn('Two, third version.'));
    for (let i = 3; i <= 5; i += 1) await client.sendAndRead(threadId, turn(`Third ${i}.`));
    const fourth = await client.editAndRead(
      threadId,
      nthUser(await client.detail(threadId), 4).id,
      turn('Four, again.'),
    );
    expect(fourth.messages.at(-2)?.metadata.version).toMatchObject({ index: 2, count: 2 });

    // On the root: its latest turn deleted, another sent in its place.
    const onRoot = await client.switchBranch(threadId, rootBranch);
    const deleted = await client.fetch(
      'DELETE',
      `/api/threads/${threadId}/messages/${nthUser(onRoot, 4).id}`,
    );
    expect(deleted.status).toBe(200);
    await deleted.arrayBuffer();
    await client.sendAndRead(threadId, turn('Root 4, after the delete.'));

    const branches = [
      rootBranch,
      second.thread.activeBranchId,
      third.thread.activeBranchId,
      fourth.thread.activeBranchId,
    ];
    const shown: ThreadDetail[] = [];
    for (const branchId of branches) shown.push(await client.switchBranch(threadId, branchId));
    expect(nthUser(shown[0] as ThreadDetail, 2).metadata.version).toMatchObject({ index: 1, count: 3 });
    expect(nthUser(shown[2] as ThreadDetail, 2).metadata.version).toMatchObject({ index: 3, count: 3 });

    const live = await lineageRows(threadId);
    // 4 user messages on each of the root (one deleted, one sent), the second, third and fourth.
    expect(live.length).toBe(4 + 3 + 5 + 4);

    await api.runtime.database.db.execute(sql`delete from message_lineage where thread_id = ${threadId}`);
    expect(await lineageRows(threadId)).toEqual([]);
    await runMigrationBackfill(api.runtime.database.db, MIGRATION);
    expect(await lineageRows(threadId)).toEqual(live);

    // Missing rows of the shown branch are written again by the next detail, and a row of a message
    // it no longer holds goes.
    const shownBranch = branches.at(-1) as string;
    await api.runtime.database.db.execute(sql`delete from message_lineage where branch_id = ${shownBranch}`);
    await api.runtime.database.db.execute(sql`
      insert into message_lineage (thread_id, branch_id, message_id, parent_id, created_at)
      values (${threadId}, ${shownBranch}, 'gone', '', now())`);
    expect((await lineageRows(threadId)).length).toBe(live.length - 4 + 1);
    await client.detail(threadId);
    await expect.poll(async () => await lineageRows(threadId)).toEqual(live);

    for (const [index, branchId] of branches.entries()) {
      expect((await client.switchBranch(threadId, branchId)).messages).toEqual(shown[index]?.messages);
    }
  });
});
