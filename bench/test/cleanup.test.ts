import { describe, expect, it } from 'vitest';
import { endHarness, processesInGroup, startHarness } from './harness';

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
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
});
