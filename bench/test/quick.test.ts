import type { ChildProcess } from 'node:child_process';
import { CHAT_RUNTIMES } from '@chat/api/chat-runtimes';
import { createTestDatabase, startTestServer } from '@chat/db/testing';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { assertEmpty, ForeignDataError } from '../src/database';
import type { Row } from '../src/rows';
import { endHarness, startHarness } from './harness';

let running: ChildProcess | undefined;

afterEach(async () => {
  const child = running;
  running = undefined;
  if (child) await endHarness(child);
}, 30_000);

function runQuick(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const harness = startHarness(['--quick', '--json']);
  running = harness.child;
  return harness.done;
}

const isSummary = (value: unknown) =>
  typeof value === 'object' && value !== null && Number.isFinite((value as { median: number }).median);

describe('pnpm bench --quick', () => {
  it('runs every scenario against its own servers and reports each figure', async () => {
    const { code, stdout, stderr } = await runQuick();
    expect(code, stderr).toBe(0);
    const { info, rows } = JSON.parse(stdout) as { info: { mode: string }; rows: Row[] };
    expect(info.mode).toBe('quick');
    const byId = new Map(rows.map((row) => [row.id, row]));

    // Timings beside the baseline: both sides measured, as distributions; a turn's own cost on
    // every runtime driver.
    const perDriver = CHAT_RUNTIMES.flatMap((driver) =>
      ['cpu-per-turn', 'first-delta', 'whole-turn', 'stop-send'].map((id) => `${id}-${driver}`),
    );
    for (const id of [...perDriver, 'send-during-part-flood', 'send-during-image-flood', 'streams-10']) {
      const row = byId.get(id);
      expect(isSummary(row?.baseline), id).toBe(true);
      expect(isSummary(row?.app), id).toBe(true);
      expect(row?.ratio, id).toBeTruthy();
    }
    for (const id of [
      ...CHAT_RUNTIMES.map((driver) => `interrupt-${driver}`),
      'detail-20',
      'detail-40',
      'attach-lag',
      'rate-20',
      'burst',
    ])
      expect(isSummary(byId.get(id)?.app), id).toBe(true);
    // Load: every send of the small burst was started (shed ones after their Retry-After), and a
    // Stop and a read answered while it was going on; a second instance relayed a reply.
    expect(byId.get('burst')?.note).toMatch(/all 40 started/);
    for (const id of ['burst-stop', 'burst-read']) expect(byId.get(id)?.met, id).toBe(true);
    expect((byId.get('attach-lag')?.app as { n: number } | undefined)?.n).toBeGreaterThan(10);
    // Memory is read from /proc for both processes.
    for (const id of ['rss-idle', 'rss-streams-10']) {
      expect(byId.get(id)?.app, id).toBeGreaterThan(10);
      expect(byId.get(id)?.baseline, id).toBeGreaterThan(10);
    }
    expect(byId.get('rss-after-detail')?.app).toBeGreaterThan(10);
    expect(byId.get('detail-growth')?.ratio).toMatch(/size\^/);
    // The web build exists (turbo builds @chat/web before this test): first-load assets are
    // measured in Chromium, never reported "not run", and every file worth it is sent compressed.
    for (const id of ['web-js', 'web-css']) {
      const row = byId.get(id);
      expect(row?.notRun, id).toBeUndefined();
      expect(row?.app, id).toBeGreaterThan(0);
      expect(row?.met, id).toBe(true);
    }
    // The targets of the issue are shown beside the figures they judge.
    for (const driver of CHAT_RUNTIMES) expect(byId.get(`first-delta-${driver}`)?.met).toBeTypeOf('boolean');
    expect(byId.get('rss-idle')?.target).toBe('<= 250 MB');
  });

  it('refuses a database that holds data it did not create', async () => {
    const server = await startTestServer();
    const database = await createTestDatabase(server.adminUrl);
    try {
      // createTestDatabase migrates: the app's tables are someone else's data here.
      await expect(assertEmpty(database.url)).rejects.toBeInstanceOf(ForeignDataError);
      const sql = postgres(server.adminUrl, { max: 1, onnotice: () => {} });
      const name = `chat_bench_empty_${Date.now()}`;
      await sql.unsafe(`create database "${name}"`);
      const url = new URL(server.adminUrl);
      url.pathname = `/${name}`;
      await expect(assertEmpty(url.toString())).resolves.toBeUndefined();
      await sql.unsafe(`drop database "${name}"`);
      await sql.end();
    } finally {
      await database.drop();
      await server.stop();
    }
  });
});
