import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { endHarness, processesInGroup, startHarness } from './harness';

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

describe('a benchmark ended from outside', () => {
  it('leaves no server behind when the test running it gives up mid-run (a timeout)', async () => {
    // The CPU scenario alone: once both servers are up, the harness is mid-run with every kind of
    // child it starts (PostgreSQL, the baseline, the API) alive.
    const harness = startHarness(['--quick', '--json', '--only=cpu']);
    const pid = harness.child.pid as number;
    try {
      await until(() => /baseline http\S+, api http/.test(harness.stderr()), 150_000);
      // The harness, its database server and both HTTP servers share its group.
      expect(processesInGroup(pid).length).toBeGreaterThanOrEqual(3);
    } finally {
      await endHarness(harness.child);
    }
    expect(processesInGroup(pid)).toEqual([]);
  });

  it('leaves no API process behind when the API runs as a supervisor and one process per core', async () => {
    // The rate alone runs on the API as deployed (API_PROCESSES: here 2, whatever the cores).
    const harness = startHarness(['--quick', '--json', '--only=rate', '--api-processes=2']);
    const pid = harness.child.pid as number;
    try {
      await until(() => /api with 2 processes http/.test(harness.stderr()), 170_000);
      const apiProcesses = processesInGroup(pid).filter((member) =>
        commandLineOf(member).includes('dist/main.mjs'),
      );
      // The supervisor and its two API processes (the single-process API was stopped before).
      expect(apiProcesses.length).toBeGreaterThanOrEqual(3);
    } finally {
      await endHarness(harness.child);
    }
    expect(processesInGroup(pid)).toEqual([]);
  }, 240_000);
});
