/** Summary statistics over samples in milliseconds (or any unit). */
export interface Summary {
  n: number;
  median: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of sorted values: the smallest value with at least `p`% at or below it. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? Number.NaN;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Runs `sample` `iterations` times in a row (after `warmup` unrecorded runs), returning each result. */
export async function repeat(
  iterations: number,
  sample: (index: number) => Promise<number>,
  options: { warmup?: number; budgetMs?: number; minIterations?: number } = {},
): Promise<number[]> {
  for (let index = 0; index < (options.warmup ?? 0); index++) await sample(-1 - index);
  // A deadline counted after the warm-up: one slow warm-up must not leave too few samples.
  const samples: number[] = [];
  const deadline = options.budgetMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.budgetMs;
  const minimum = options.minIterations ?? 3;
  for (let index = 0; index < iterations; index++) {
    samples.push(await sample(index));
    if (samples.length >= minimum && Date.now() > deadline) break;
  }
  return samples;
}
