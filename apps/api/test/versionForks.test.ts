import type { ChatMessage, ThreadDetail } from '@chat/contracts';
import { schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { activeTranscript } from '../src/chats/branches/activeTranscript';
import { type LineageRow, versionsFromLineage, versionsOfActiveBranch } from '../src/chats/branches/lineage';
import { listSiblingRows } from '../src/chats/branches/lineageRepository';
import { listBranchOrigins, listLiveBranches } from '../src/chats/branches/repository';
import { transcriptTables } from '../src/chats/transcript/tables';
import { exportJson } from './support/chatCopies';
import { type ApiClient, readChunks, readUntilWords, untilIdle } from './support/client';
import { runMigrationBackfill } from './support/migrationBackfill';
import { scanSiblingRows } from './support/siblingScan';
import { type TestApi, useTestApi } from './support/testApi';

/**
 * Thread detail finds versions under the thread's forks only (ADR-056). Whatever the tree, from
 * every live branch, that must give exactly what reading every other branch's lineage rows gave
 * (the query before it, support/siblingScan.ts), and what the rule gives from the transcripts of
 * all live branches (lineage.ts): through versions of versions, removed versions, a version whose
 * fork message was deleted from its parent, turns deleted and sent again in their place, a failed
 * attempt resolved, a regenerate, an edit whose reply is still streaming, and an imported copy.
 */
let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const turn = (label: string) => `${label} [[words:3]] [[delay:0]]`;
const users = (detail: ThreadDetail) => detail.messages.filter((message) => message.role === 'user');
const nthUser = (detail: ThreadDetail, n: number) => users(detail)[n - 1] as ChatMessage;
const MIGRATION = new URL('../../../packages/db/drizzle/0021_lineage_forks.sql', import.meta.url);
const key = (row: LineageRow) => `${row.branchId}/${row.parentId}/${row.messageId}`;

async function deleteTurn(threadId: string, messageId: string): Promise<ThreadDetail> {
  const response = await client.fetch('DELETE', `/api/threads/${threadId}/messages/${messageId}`);
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  return await client.detail(threadId);
}

/**
 * From every live branch of the thread as the shown one: the rows found under the forks equal the
 * rows the whole scan finds, and the versions they give equal the rule's over all transcripts.
 * Returns how many shown user messages had versions, summed over the branches.
 */
async function expectSameVersions(threadId: string): Promise<number> {
  const db = api.runtime.database.db;
  const [thread] = await db.select().from(schema.threads).where(eq(schema.threads.id, threadId));
  if (!thread) throw new Error('no thread');
  const live = await listLiveBranches(db, threadId);
  const transcripts = [];
  for (const branch of live) {
    const origins = await listBranchOrigins(db, branch.id);
    const messages = await transcriptTables.readBranchMessages(db, branch.memoryThreadId);
    transcripts.push({
      branchId: branch.id,
      lastActiveAt: branch.lastActiveAt,
      messages: messages.map((message) => ({
        originId: origins.get(message.id) ?? message.id,
        role: message.role,
        createdAt: message.createdAt,
      })),
    });
  }
  let withVersions = 0;
  for (const branch of live) {
    const shown = await activeTranscript(db, { ...thread, activeBranchId: branch.id });
    const found = await listSiblingRows(db, threadId, branch.id, shown.userMessages);
    const scanned = await scanSiblingRows(db, threadId, branch.id, shown.userMessages);
    expect(found.map(key).sort()).toEqual(scanned.map(key).sort());
    const active = { branchId: branch.id, lastActiveAt: branch.lastActiveAt };
    const fromScan = versionsFromLineage(active, shown.userMessages, scanned);
    expect(shown.versions).toEqual(fromScan);
    expect(shown.versions).toEqual(versionsOfActiveBranch(transcripts, branch.id));
    withVersions += shown.versions.size;
  }
  return withVersions;
}

describe('versions found under the forks (ADR-056)', () => {
  it('are those every branch scan found, through a deep tree of versions, deletes and an import', async () => {
    const threadId = await client.createThread();
    for (let i = 1; i <= 5; i += 1) await client.sendAndRead(threadId, turn(`Root ${i}.`));
    const root = await client.detail(threadId);
    const rootBranch = root.thread.activeBranchId;
    expect(await expectSameVersions(threadId)).toBe(0);

    // A version of message 3, continued; a version of that version (nested); a fork of the fork
    // at a later message; a regenerate of the latest reply there.
    const first = await client.editAndRead(threadId, nthUser(root, 3).id, turn('Three, second version.'));
    await client.sendAndRead(threadId, turn('First version 4.'));
    await client.editAndRead(threadId, nthUser(first, 3).id, turn('Three, third version.'));
    for (let i = 4; i <= 6; i += 1) await client.sendAndRead(threadId, turn(`Nested ${i}.`));
    const later = await client.editAndRead(
      threadId,
      nthUser(await client.detail(threadId), 5).id,
      turn('Five, again.'),
    );
    const regenerated = await client.fetch(
      'POST',
      `/api/threads/${threadId}/messages/${later.messages.at(-1)?.id}/regenerate`,
      { clientRequestId: crypto.randomUUID() },
    );
    expect(regenerated.status).toBe(200);
    await readChunks(regenerated);
    expect(await expectSameVersions(threadId)).toBeGreaterThan(0);

    // A removed version: its own edit deleted (the version before it is shown again).
    const doomed = await client.editAndRead(threadId, nthUser(later, 4).id, turn('Four, soon gone.'));
    const doomedBranch = doomed.thread.activeBranchId;
    await deleteTurn(threadId, nthUser(doomed, 4).id);
    const branches = await listLiveBranches(api.runtime.database.db, threadId);
    expect(branches.map((branch) => branch.id)).not.toContain(doomedBranch);

    // On the root: its latest two turns deleted in place (message 3, the first version's fork
    // message, among them), then another turn sent where they were. Message 3's versions now
    // answer the new message: the root forks where nothing was ever edited.
    let onRoot = await client.switchBranch(threadId, rootBranch);
    onRoot = await deleteTurn(threadId, nthUser(onRoot, 5).id);
    onRoot = await deleteTurn(threadId, nthUser(onRoot, 4).id);
    onRoot = await client.switchBranch(threadId, rootBranch);
    onRoot = await deleteTurn(threadId, nthUser(onRoot, 3).id);
    onRoot = await client.switchBranch(threadId, rootBranch);
    expect(users(onRoot)).toHaveLength(2);
    await client.sendAndRead(threadId, turn('Root 3, after the deletes.'));
    onRoot = await client.detail(threadId);
    expect(nthUser(onRoot, 3).metadata.version?.count).toBeGreaterThan(1);
    // Deleted back to message 2, whose versions nobody made: the same again one turn earlier.
    onRoot = await deleteTurn(threadId, nthUser(onRoot, 3).id);
    onRoot = await client.switchBranch(threadId, rootBranch);
    onRoot = await deleteTurn(threadId, nthUser(onRoot, 2).id);
    await client.sendAndRead(threadId, turn('Root 2, after the deletes.'));
    onRoot = await client.detail(threadId);
    expect(nthUser(onRoot, 2).metadata.version?.count).toBe(2);
    expect(await expectSameVersions(threadId)).toBeGreaterThan(0);

    // A failed attempt at the end of the first version, resolved by deleting it, then a turn sent.
    await client.switchBranch(threadId, first.thread.activeBranchId);
    await client.sendAndRead(threadId, 'this fails [[fail]]');
    const failed = await client.detail(threadId);
    const head = failed.turnQueue.items[0];
    expect(head?.status).toBe('failed');
    const resolved = await client.fetch('DELETE', `/api/threads/${threadId}/queue/${head?.id}`);
    expect(resolved.status).toBe(200);
    await resolved.arrayBuffer();
    await client.sendAndRead(threadId, turn('After the failed attempt.'));
    expect(await expectSameVersions(threadId)).toBeGreaterThan(0);

    // A version whose reply still streams: its turn has not settled (no lineage row of its own).
    const current = await client.detail(threadId);
    const streaming = await client.fetch(
      'POST',
      `/api/threads/${threadId}/messages/${nthUser(current, 2).id}/versions`,
      { clientRequestId: crypto.randomUUID(), text: 'Two, slowly. [[words:400]] [[delay:20]]' },
    );
    expect(streaming.status).toBe(200);
    await readUntilWords(streaming, 3);
    const midway = await client.detail(threadId);
    expect(midway.turnQueue.activeTurn).not.toBeNull();
    await expectSameVersions(threadId);
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    await untilIdle(client, threadId);
    expect(await expectSameVersions(threadId)).toBeGreaterThan(0);

    // An imported copy finds its versions the same way.
    const imported = await client.json<{ thread: { id: string } }>(
      'POST',
      '/api/imports',
      await exportJson(client, threadId),
    );
    expect(imported.status).toBe(201);
    const copy = imported.body.thread.id;
    expect(await expectSameVersions(copy)).toBeGreaterThan(0);

    // Threads from before the forks were recorded: the migration's backfill finds theirs.
    const db = api.runtime.database.db;
    await db.execute(sql`delete from lineage_forks where thread_id in (${threadId}, ${copy})`);
    await runMigrationBackfill(api.runtime.database.db, MIGRATION);
    expect(await expectSameVersions(threadId)).toBeGreaterThan(0);
    expect(await expectSameVersions(copy)).toBeGreaterThan(0);
  });

  it('are found after the backfill where a turn deleted before it is sent again', async () => {
    const threadId = await client.createThread();
    for (let i = 1; i <= 3; i += 1) await client.sendAndRead(threadId, turn(`Root ${i}.`));
    const root = await client.detail(threadId);
    const rootBranch = root.thread.activeBranchId;
    await client.editAndRead(threadId, nthUser(root, 3).id, turn('Three, again.'));
    // The root's latest two turns deleted: it ends before message 2, which the version holds.
    let onRoot = await client.switchBranch(threadId, rootBranch);
    onRoot = await deleteTurn(threadId, nthUser(onRoot, 3).id);
    onRoot = await client.switchBranch(threadId, rootBranch);
    await deleteTurn(threadId, nthUser(onRoot, 2).id);
    await api.runtime.database.db.execute(sql`delete from lineage_forks where thread_id = ${threadId}`);
    await runMigrationBackfill(api.runtime.database.db, MIGRATION);
    await client.sendAndRead(threadId, turn('Two, after the migration.'));
    expect(nthUser(await client.detail(threadId), 2).metadata.version?.count).toBe(2);
    expect(await expectSameVersions(threadId)).toBeGreaterThan(0);
  });
});
