import { describe, expect, it } from 'vitest';
import type { DriverEvent } from '../src/chats/turns/driver/types';
import { IdleBoundEvents } from '../src/chats/turns/running/idleBound';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A run that says something every `everyMs`, `count` times, then goes silent for `silentMs`. */
async function* run(count: number, everyMs: number, silentMs = 0): AsyncGenerator<DriverEvent> {
  for (let index = 0; index < count; index++) {
    await sleep(everyMs);
    yield { type: 'resume-token', token: String(index) };
  }
  await sleep(silentMs);
  yield { type: 'turn-complete', saved: true };
}

describe("a run's idle bound (one timer for the whole run)", () => {
  it('counts from each wait, not from the start: a steady run longer than the bound is never idle', async () => {
    const events = new IdleBoundEvents(run(6, 60), 150);
    const seen: string[] = [];
    for (let next = await events.next(); next !== 'idle' && !next.done; next = await events.next())
      seen.push(next.value.type);
    events.stop();
    expect(seen).toEqual([...Array(6).fill('resume-token'), 'turn-complete']);
  });

  it('says idle once a wait passes the bound, however many events came before', async () => {
    const events = new IdleBoundEvents(run(3, 20, 400), 150);
    const seen: Array<string> = [];
    for (;;) {
      const next = await events.next();
      if (next === 'idle' || next.done) {
        seen.push(next === 'idle' ? 'idle' : 'done');
        break;
      }
      seen.push(next.value.type);
    }
    events.stop();
    expect(seen).toEqual(['resume-token', 'resume-token', 'resume-token', 'idle']);
  });
});
