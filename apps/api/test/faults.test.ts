import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFaultCase } from './support/faults/faultCase';
import { FAULT_KINDS, type FaultKind, FaultLab } from './support/faults/lab';
import { SCENARIOS } from './support/faults/scenarios';
import { baseSeed, mix } from './support/faults/seed';

/**
 * The fault-injection suite: "nothing accepted is lost, whatever fails". Each case plays a reply, a
 * settle, a steer's delivery and a tool approval at once, each on its own thread, and injects one
 * fault for all of them at a point of each chosen by the case's seed: PostgreSQL stopped for 5, 30
 * or 60 s under the API, or the API killed with SIGKILL and started again on the same database.
 * After recovery every thread is checked against one invariant (support/faults/losses.ts).
 *
 * A case with no fault at all is the control: what the invariant finds there, it would find without
 * any fault.
 *
 * Profiles: the quick one runs inside `pnpm test` (the control, a kill, a 5 s and a 60 s outage);
 * the full one is `pnpm faults` (`FAULT_PROFILE=full`: every fault kind, `FAULT_CASES` seeds each, 3
 * by default). `FAULT_KINDS=kill,outage-30s` picks kinds and `FAULT_SEED=n` the run's seed. A
 * failure prints the line that replays its case alone (`FAULT_REPLAY=kind:seed`).
 */
const full = process.env.FAULT_PROFILE === 'full';
const seed = baseSeed();
const cases = process.env.FAULT_REPLAY
  ? [replayed(process.env.FAULT_REPLAY)]
  : chosenKinds(full ? FAULT_KINDS : ['none', 'kill', 'outage-5s', 'outage-60s']).flatMap((kind) =>
      Array.from({ length: full ? casesPerKind() : 1 }, (_, index) => ({
        kind,
        seed: mix(seed, `${kind} ${index}`),
      })),
    );

let lab: FaultLab;

beforeAll(async () => {
  lab = await FaultLab.open();
}, 120_000);

afterAll(async () => {
  await lab?.close();
});

describe(`nothing accepted is lost, whatever fails (fault seed ${seed})`, () => {
  it.each(cases)(
    'keeps every accepted send and every streamed reply through $kind (seed $seed)',
    async ({ kind, seed: caseSeed }) => {
      const { losses, report } = await runFaultCase(lab, kind, caseSeed, SCENARIOS);
      const replay = `replay: FAULT_REPLAY=${kind}:${caseSeed} pnpm faults`;
      expect(losses, `${report}\n${replay}`).toEqual([]);
    },
    300_000,
  );
});

function casesPerKind(): number {
  const given = Number(process.env.FAULT_CASES ?? 3);
  if (!Number.isInteger(given) || given < 1) throw new Error('FAULT_CASES must be a whole number from 1');
  return given;
}

function replayed(given: string): { kind: FaultKind; seed: number } {
  const [kind, caseSeed] = given.split(':');
  const [chosen] = chosenKinds([], kind);
  const parsed = Number(caseSeed);
  if (!chosen || !Number.isInteger(parsed)) throw new Error(`FAULT_REPLAY must be kind:seed, not ${given}`);
  return { kind: chosen, seed: parsed };
}

function chosenKinds(defaults: readonly FaultKind[], given = process.env.FAULT_KINDS): FaultKind[] {
  if (!given) return [...defaults];
  const chosen = given.split(',').map((kind) => kind.trim());
  const unknown = chosen.filter((kind) => !FAULT_KINDS.includes(kind as FaultKind));
  if (unknown.length > 0)
    throw new Error(`FAULT_KINDS: unknown ${unknown.join(', ')} (${FAULT_KINDS.join(', ')})`);
  return chosen as FaultKind[];
}
