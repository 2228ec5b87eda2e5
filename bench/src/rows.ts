import type { Summary } from './stats';

/** One figure of the report. Timings are Summaries (never one absolute time); sizes are plain numbers. */
export interface Row {
  /** A stable key (the quick test and `--json` readers look rows up by it). */
  id: string;
  figure: string;
  /** `count`: a plain number of things (turns, requests). */
  unit: 'ms' | 'MB' | 'KB' | 'count';
  baseline?: Summary | number;
  app?: Summary | number;
  /** How the app compares: to the baseline, or (detail growth) to a smaller size. */
  ratio?: string;
  target?: string;
  /** undefined: no target, or the target does not apply to this run (say, --quick). */
  met?: boolean;
  /** Why the row was not measured; a row with this has no values. */
  notRun?: string;
  note?: string;
}

export interface Mode {
  quick: boolean;
  /** Iterations of the single-request latency figures (after warm-up). */
  latencyIterations: number;
  warmup: number;
  detailSizes: number[];
  versions: number;
  detailIterations: number;
  /** At most this long sampling one detail size (at least 3 samples are always taken). */
  detailBudgetMs: number;
  streams: number[];
  streamWords: number;
  stopIterations: number;
  /** Short turns per round of the CPU-per-turn figure. */
  cpuTurns: number;
  /** Paces of the sustained new-turn figure (sends a second), each held for `rateSeconds`. */
  rates: number[];
  rateSeconds: number;
  /** Sends at once in the burst figure. */
  burst: number;
  /** Paced replies followed through a second API instance. */
  attachTurns: number;
  /** How long the frozen-database scenario holds PostgreSQL stopped (SIGSTOP), in seconds. */
  freezeSeconds: number;
}

export const QUICK: Mode = {
  quick: true,
  latencyIterations: 5,
  warmup: 2,
  detailSizes: [20, 40],
  versions: 2,
  detailIterations: 3,
  detailBudgetMs: 2_000,
  streams: [10],
  streamWords: 10,
  stopIterations: 3,
  cpuTurns: 10,
  rates: [20],
  rateSeconds: 1,
  burst: 40,
  attachTurns: 1,
  freezeSeconds: 5,
};

export const FULL: Mode = {
  quick: false,
  latencyIterations: 100,
  warmup: 10,
  detailSizes: [100, 1_000, 2_000, 5_000],
  versions: 10,
  detailIterations: 20,
  detailBudgetMs: 60_000,
  streams: [500, 1_000],
  streamWords: 100,
  stopIterations: 30,
  cpuTurns: 200,
  rates: [50, 100, 200],
  rateSeconds: 10,
  burst: 1_000,
  attachTurns: 5,
  freezeSeconds: 20,
};

export function ratioText(app: Summary, baseline: Summary): string {
  const factor = app.median / baseline.median;
  const delta = app.median - baseline.median;
  return `x${factor.toFixed(1)} (${delta >= 0 ? '+' : ''}${delta.toFixed(1)} ms)`;
}

export const MB = 1024 * 1024;
