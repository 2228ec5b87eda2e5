import { availableParallelism, loadavg } from 'node:os';
import { CHAT_RUNTIMES } from '@chat/api/chat-runtimes';
import { createTestDatabase, startTestServer } from '@chat/db/testing';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { assertEmpty, ForeignDataError } from '../src/database';
import type { Row } from '../src/rows';
import { endHarness, type HarnessRun, startHarness } from './harness';

let running: HarnessRun | undefined;

afterEach(async () => {
  const harness = running;
  running = undefined;
  if (!harness) return;
  // Still running: the test gave up (its time limit). Where the benchmark had got to says why.
  if (harness.child.exitCode === null && harness.child.signalCode === null)
    console.error(`the quick benchmark was still running; its progress:\n${harness.stderr().slice(-3_000)}`);
  await endHarness(harness.child);
}, 30_000);

function runQuick(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const harness = startHarness(['--quick', '--json']);
  running = harness;
  return harness.done;
}

const isSummary = (value: unknown) =>
  typeof value === 'object' && value !== null && Number.isFinite((value as { median: number }).median);

/**
 * The test's time limit. About two minutes on an idle 2-core machine; beside other work every step
 * waits its turn for a core, so the limit grows with the machine's load per core at the start (up
 * to four times). BENCH_QUICK_TIMEOUT_MS sets it (leftovers.test.ts runs past a short one).
 */
const QUICK_TIMEOUT_MS =
  Number(process.env.BENCH_QUICK_TIMEOUT_MS) ||
  240_000 * Math.min(4, Math.max(1, (loadavg()[0] ?? 0) / availableParallelism()));

describe('pnpm bench --quick', () => {
  it(
    'runs every scenario against its own servers and reports each figure',
    async () => {
      const { code, stdout, stderr } = await runQuick();
      expect(code, stderr).toBe(0);
      const { info, rows } = JSON.parse(stdout) as { info: { mode: string }; rows: Row[] };
      expect(info.mode).toBe('quick');
      const byId = new Map(rows.map((row) => [row.id, row]));
      // A scenario that threw is one row saying why: shown first, it names the cause.
      expect(rows.filter((row) => row.id.endsWith('-failed')).map((row) => row.notRun)).toEqual([]);

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
      // Stop and a read answered while it was going on (a time, not NaN: they answered 200); a second
      // instance relayed a reply.
      expect(byId.get('burst')?.note).toMatch(/all 40 started/);
      for (const id of ['burst-stop', 'burst-read'])
        expect(Number.isFinite(byId.get(id)?.app), id).toBe(true);
      // The rate, the burst and the streams ran on the API as deployed: one process per core, each
      // process's CPU and memory read from /proc (the supervisor's, then its API processes').
      const processes = availableParallelism();
      for (const id of ['rate-20', 'burst', 'streams-10']) {
        expect(byId.get(id)?.figure, id).toContain(`on ${processes} API process`);
        if (processes > 1)
          expect(byId.get(id)?.note, id).toMatch(
            new RegExp(`supervisor \\d+%, API processes( \\d+%,?){${processes}}`),
          );
      }
      // Exactly the supervisor and its API processes: given the run's DATABASE_URL, the supervisor
      // starts no PostgreSQL of its own (which would be one more process under it).
      if (processes > 1)
        for (const id of ['rate-20', 'burst', 'rss-streams-10'])
          expect(byId.get(id)?.note, id).toMatch(
            new RegExp(`each process's peak: (\\d+,? ){${processes + 1}}MB`),
          );
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
      for (const driver of CHAT_RUNTIMES)
        expect(byId.get(`first-delta-${driver}`)?.met, driver).toBeTypeOf('boolean');
      expect(byId.get('rss-idle')?.target).toBe('<= 250 MB');
      // The frozen database: requests answered during the freeze, and what became of the accepted
      // sends and of the reply streaming through it afterwards (a count, 0 when nothing was lost).
      const frozen = byId.get('frozen-answer');
      if (process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL) {
        // Another's server: the harness does not own its processes, and says so.
        expect(frozen?.notRun).toMatch(/can freeze only an embedded PostgreSQL it started itself/);
        return;
      }
      expect(frozen?.notRun).toBeUndefined();
      expect(isSummary(frozen?.app)).toBe(true);
      expect((frozen?.app as { n: number } | undefined)?.n).toBeGreaterThanOrEqual(10);
      expect(frozen?.target).toBe('every answer <= 2 s (max)');
      expect(byId.get('frozen-lost')?.app).toBeTypeOf('number');
      expect(byId.get('frozen-lost')?.note).toMatch(/the reply streaming through it/);
    },
    QUICK_TIMEOUT_MS,
  );

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
