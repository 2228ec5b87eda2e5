import { schema } from '@chat/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { activeTranscript } from '../../src/chats/branches/activeTranscript';
import { listSiblingRows } from '../../src/chats/branches/lineageRepository';
import { transcriptTables } from '../../src/chats/transcript/tables';
import { type ApiClient, readChunks } from '../support/client';
import { explainSiblingScan, scanSiblingRows } from '../support/siblingScan';
import { type TestApi, useTestApi } from '../support/testApi';

/**
 * A measurement, not a test (`pnpm --filter @chat/api probe`, outside the test command): the cost of the versions of
 * a long chat's thread detail (issue 38). Grows threads through the database (turns written as
 * memory rows with their lineage rows, as a settle leaves them) with edits through the API spread
 * evenly along the way (as `bench/src/scenarios/detail.ts` does), optionally beside other threads'
 * rows, then times GET detail (median of 20) and the versions query alone (EXPLAIN ANALYZE of the
 * query detail ran before issue 38, and of `listSiblingRows`, alternating).
 *
 *   OTHER_THREADS=40 npx vitest run --config vitest.probe.config.ts test/probes/detailVersionsScale.probe.ts
 */
const OTHER_THREADS = Number(process.env.OTHER_THREADS ?? 0);
const READS = 20;

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** Stamps after every message written so far (memory orders a branch by them). */
let clock = Date.now();
const stamp = () => {
  clock = Math.max(clock + 1, Date.now());
  return new Date(clock);
};

async function activeBranch(threadId: string) {
  const db = api.runtime.database.db;
  const [thread] = await db.select().from(schema.threads).where(eq(schema.threads.id, threadId));
  const [branch] = await db
    .select()
    .from(schema.branches)
    .where(eq(schema.branches.id, thread?.activeBranchId ?? ''));
  if (!thread || !branch) throw new Error('no active branch');
  return { thread, branch };
}

/** `turns` user/assistant pairs appended to the active branch, with their lineage rows. */
async function grow(threadId: string, turns: number): Promise<void> {
  const db = api.runtime.database.db;
  const { thread, branch } = await activeBranch(threadId);
  const messages = [];
  for (let i = 0; i < turns; i += 1) {
    for (const role of ['user', 'assistant'] as const) {
      messages.push({
        id: crypto.randomUUID(),
        threadId: branch.memoryThreadId,
        resourceId: thread.ownerId,
        role,
        content: JSON.stringify({ format: 2, parts: [{ type: 'text', text: `${role} ${i} words words` }] }),
        createdAt: stamp(),
      });
    }
  }
  await transcriptTables.insertMessages(db, messages);
  await transcriptTables.writeBranchLineage(db, branch.id);
}

async function editLatest(threadId: string): Promise<void> {
  // The edit's messages are stamped now: after every message written so far.
  while (Date.now() <= clock) await new Promise((resolve) => setTimeout(resolve, 5));
  const detail = await client.detail(threadId);
  const last = detail.messages.findLast((message) => message.role === 'user');
  const response = await client.fetch('POST', `/api/threads/${threadId}/messages/${last?.id}/versions`, {
    clientRequestId: crypto.randomUUID(),
    text: 'Edited. [[words:3]] [[delay:0]]',
  });
  expect(response.status).toBe(200);
  await readChunks(response);
  clock = Math.max(clock, Date.now() + 5);
}

/** A thread of `size` messages on its shown branch with `edits` versions made evenly along it. */
async function buildThread(size: number, edits: number): Promise<string> {
  const threadId = await client.createThread();
  await client.sendAndRead(threadId, 'First. [[words:3]] [[delay:0]]');
  const turns = size / 2;
  let done = 1;
  for (let k = 1; k <= edits; k += 1) {
    const at = Math.round((turns * k) / (edits + 1));
    await grow(threadId, at - done);
    done = at;
    await editLatest(threadId);
  }
  await grow(threadId, turns - done);
  return threadId;
}

async function measure(label: string, threadId: string): Promise<void> {
  const db = api.runtime.database.db;
  const { thread } = await activeBranch(threadId);
  const { userMessages, branch } = await activeTranscript(db, thread);
  const key = (row: { messageId: string; branchId: string }) => `${row.branchId}/${row.messageId}`;
  const scanned = (await scanSiblingRows(db, threadId, branch.id, userMessages)).map(key).sort();
  const found = (await listSiblingRows(db, threadId, branch.id, userMessages)).map(key).sort();
  expect(found).toEqual(scanned);

  // Alternating: the query before ADR-056 (its plan as run), and listSiblingRows (a round trip).
  const old: number[] = [];
  const now: number[] = [];
  let plan: Record<string, unknown> = {};
  const fresh: number[] = [];
  let newPlan: Record<string, unknown> = {};
  const [table] = await db.execute<{ name: string | null }>(
    sql`select to_regclass('lineage_forks')::text as name`,
  );
  const hasForks = Boolean(table?.name);
  for (let i = 0; i < 10; i += 1) {
    const explained = await explainSiblingScan(db, threadId, branch.id, userMessages);
    plan = explained.Plan as Record<string, unknown>;
    old.push(Number(explained['Execution Time']));
    const started = performance.now();
    await listSiblingRows(db, threadId, branch.id, userMessages);
    now.push(performance.now() - started);
    // The statement listSiblingRows runs (lineageRepository.ts), with its plan (when it exists).
    if (!hasForks) continue;
    const [forks] = await db.execute<{ 'QUERY PLAN': Array<Record<string, unknown>> }>(sql`
      explain (analyze, buffers, format json)
      select l.message_id, l.parent_id, l.branch_id, l.created_at, b.last_active_at
      from message_lineage l
      join branches b on b.id = l.branch_id and b.removed_at is null
      where l.thread_id = ${threadId}
        and l.parent_id = any(array(select f.parent_id from lineage_forks f where f.thread_id = ${threadId}))
        and l.branch_id <> ${branch.id}`);
    const forkPlan = forks?.['QUERY PLAN'][0] ?? {};
    newPlan = forkPlan.Plan as Record<string, unknown>;
    fresh.push(Number(forkPlan['Execution Time']));
  }
  const detailMs: number[] = [];
  const cpuMs: number[] = [];
  const detail = await client.detail(threadId);
  const versions = detail.messages.filter((message) => (message.metadata.version?.count ?? 1) > 1).length;
  for (let i = 0; i < READS; i += 1) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const response = await client.fetch('GET', `/api/threads/${threadId}`);
    await response.arrayBuffer();
    detailMs.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpuMs.push((used.user + used.system) / 1000);
  }
  const load = (await import('node:os')).loadavg()[0]?.toFixed(2);
  if (process.env.DETAIL_PROFILE === '1') await profileReads(threadId);
  console.log(
    [
      `${label}: ${detail.messages.length} messages, ${versions} with versions, ${userMessages.length} user`,
      `  old query alone (EXPLAIN ANALYZE): median ${median(old).toFixed(2)} ms, shared hit ${plan['Shared Hit Blocks']}, rows ${plan['Actual Rows']}`,
      `  forks query alone (EXPLAIN ANALYZE): median ${median(fresh).toFixed(2)} ms, shared hit ${newPlan['Shared Hit Blocks']}, rows ${newPlan['Actual Rows']}`,
      `  listSiblingRows (round trip): median ${median(now).toFixed(2)} ms`,
      `  GET detail: median ${median(detailMs).toFixed(1)} ms wall, ${median(cpuMs).toFixed(1)} ms CPU of this process (load ${load})`,
    ].join('\n'),
  );
}

/** Where the detail's time goes (DETAIL_PROFILE=1): this process's CPU by function, and its reads. */
async function profileReads(threadId: string): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  for (let i = 0; i < READS; i += 1)
    await (await client.fetch('GET', `/api/threads/${threadId}`)).arrayBuffer();
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const self = new Map<string, number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const deltas = profile.timeDeltas ?? [];
  (profile.samples ?? []).forEach((id, index) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    const name = `${frame.functionName || '(anon)'} ${frame.url.replace(/.*node_modules\//, '').replace(/.*wt-detail3\//, '')}:${frame.lineNumber}`;
    self.set(name, (self.get(name) ?? 0) + (deltas[index] ?? 0) / 1000);
  });
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 30);
  console.log(top.map(([name, ms]) => `  ${(ms / READS).toFixed(2)} ms/read  ${name}`).join('\n'));

  const db = api.runtime.database.db;
  const { thread, branch } = await activeBranch(threadId);
  const time = async (label: string, work: () => Promise<unknown>) => {
    const spent: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const started = performance.now();
      await work();
      spent.push(performance.now() - started);
    }
    console.log(`  ${label}: median ${median(spent).toFixed(2)} ms`);
  };
  const shown = await activeTranscript(db, thread);
  const { repairBranchLineage } = await import('../../src/chats/branches/lineageRepository');
  await time('repairBranchLineage (nothing to repair)', () =>
    repairBranchLineage(db, threadId, branch.id, shown.userMessages),
  );
  await time('readMarkedBranchMessages (no cache)', () =>
    transcriptTables.readMarkedBranchMessages(db, branch),
  );
}

describe('thread detail versions at scale (measurement)', () => {
  it(
    'times the versions of 2,000 and 5,000 messages',
    async () => {
      const small = await buildThread(2_000, 4);
      await measure('2,000 / 4 edits', small);
      if (process.env.DETAIL_SMALL_ONLY === '1') return;
      const large = await buildThread(5_000, 10);
      await measure('5,000 / 10 edits', large);
      if (OTHER_THREADS > 0) {
        for (let i = 0; i < OTHER_THREADS; i += 1) await buildThread(1_000, 3);
        await api.runtime.database.db.execute(sql`analyze`);
        await measure(`2,000 / 4 edits beside ${OTHER_THREADS} threads`, small);
        await measure(`5,000 / 10 edits beside ${OTHER_THREADS} threads`, large);
      }
    },
    30 * 60_000,
  );
});
