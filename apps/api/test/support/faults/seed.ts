/**
 * Seeded randomness for the fault suite: every choice a fault case makes (which point of a reply
 * the fault hits, how long the reply is) comes from its seed, so a failing case can be run again.
 */
export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** A new generator for a part of the case, independent of how much this one is used later. */
  fork(label: string): Random;
}

export function seededRandom(seed: number): Random {
  // mulberry32
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    fork: (label) => seededRandom(mix(seed, label)),
  };
}

/** A seed derived from `seed` and a label (FNV-1a over both). */
export function mix(seed: number, label: string): number {
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (const char of label) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** `FAULT_SEED` when given (to replay a failure), else a fresh one. */
export function baseSeed(): number {
  const given = process.env.FAULT_SEED;
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isInteger(seed) || seed < 0)
      throw new Error(`FAULT_SEED must be a whole number, not ${given}`);
    return seed >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}
