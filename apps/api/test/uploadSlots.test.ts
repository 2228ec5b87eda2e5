import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/platform/errors';
import { UploadSlots } from '../src/platform/uploadSlots';

const slots = (overrides: Partial<ConstructorParameters<typeof UploadSlots>[0]> = {}) =>
  new UploadSlots({
    perAccount: 2,
    total: 3,
    maxWaitingPerAccount: 4,
    maxWaiting: 6,
    maxWaitMs: 5_000,
    ...overrides,
  });

/** Whether a promise has settled, after everything queued so far has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

async function refusalOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('upload slots', () => {
  it('runs at most two uploads of one account at once; the next waits and starts when one ends', async () => {
    const uploads = slots();
    const first = await uploads.acquire('ann');
    await uploads.acquire('ann');
    const third = uploads.acquire('ann');
    expect(await settled(third)).toBe(false);
    first();
    expect(await settled(third)).toBe(true);
  });

  it('runs at most the total at once, and a waiting account never holds back another one', async () => {
    const uploads = slots();
    const annFirst = await uploads.acquire('ann');
    await uploads.acquire('ann');
    const annThird = uploads.acquire('ann');
    // Ann waits for her own slot; Bob is not behind her in the line.
    const bobFirst = await uploads.acquire('bob');
    const bobSecond = uploads.acquire('bob');
    // Now three run (the total): Bob's second waits for any slot, Ann's third for one of hers.
    expect(await settled(bobSecond)).toBe(false);
    bobFirst();
    expect(await settled(bobSecond)).toBe(true);
    expect(await settled(annThird)).toBe(false);
    annFirst();
    expect(await settled(annThird)).toBe(true);
  });

  it('refuses past the waiting bounds: 429 for one account, 503 overloaded in all, and after the longest wait', async () => {
    const uploads = slots({ maxWaitMs: 50 });
    await uploads.acquire('ann');
    await uploads.acquire('ann');
    const annWaiting = [1, 2, 3, 4].map(() => uploads.acquire('ann'));
    const annTooMany = await refusalOf(uploads.acquire('ann'));
    expect(annTooMany.code).toBe('rate_limited');
    expect(annTooMany.headers?.['retry-after']).toBeDefined();
    await uploads.acquire('bob');
    const bobWaiting = [1, 2].map(() => uploads.acquire('bob'));
    const overloaded = await refusalOf(uploads.acquire('cyd'));
    expect(overloaded.code).toBe('overloaded');
    expect(overloaded.headers?.['retry-after']).toBeDefined();
    // Nobody frees a slot: every waiter is refused once it waited the longest wait.
    for (const waiting of [...annWaiting, ...bobWaiting])
      expect((await refusalOf(waiting)).code).toBe('overloaded');
  });

  it('takes a waiting upload out of the line when its client goes away', async () => {
    const uploads = slots();
    const first = await uploads.acquire('ann');
    await uploads.acquire('ann');
    const gone = new AbortController();
    const abandoned = uploads.acquire('ann', gone.signal);
    const next = uploads.acquire('ann');
    gone.abort();
    await expect(abandoned).rejects.toBeDefined();
    first();
    expect(await settled(next)).toBe(true);
  });
});
