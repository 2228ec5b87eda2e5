import { backoffDelay } from '@chat/contracts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBackoff } from '../app/utils/backoff';

describe('the backoff rule', () => {
  it('waits the first delay after one failure, doubling with each further one up to the bound', () => {
    expect([1, 2, 3, 4, 5, 6].map((failures) => backoffDelay(failures, 1000, 8000))).toEqual([
      1000, 2000, 4000, 8000, 8000, 8000,
    ]);
  });

  it('does not wait before anything has failed', () => {
    expect(backoffDelay(0, 1000, 8000)).toBe(0);
  });
});

describe('the web app reaching the API again', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('tries again after 1 s, 2 s, 4 s, then every 8 s, and from 1 s again once it worked', async () => {
    const backoff = createBackoff();
    const triedAt: number[] = [];
    let answers = 4;
    const task = async () => {
      triedAt.push(Date.now());
      answers -= 1;
      return answers < 0;
    };
    const start = Date.now();
    backoff.retry(task);
    await vi.advanceTimersByTimeAsync(1000 + 2000 + 4000 + 8000 + 8000);
    expect(triedAt.map((at) => at - start)).toEqual([1000, 3000, 7000, 15000, 23000]);

    triedAt.length = 0;
    const again = Date.now();
    backoff.retry(async () => {
      triedAt.push(Date.now());
      return true;
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(triedAt.map((at) => at - again)).toEqual([1000]);
  });
});
