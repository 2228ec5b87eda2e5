import { describeError } from '../errors';
import { readStream, type StreamTiming } from '../http';
import type { ServerProcess } from '../processes';
import { MB, type Row } from '../rows';
import { type Summary, summarize } from '../stats';
import { type BenchContext, inParallel, sendBaseline } from './context';

/** 20 words a second: one word every 50 ms. */
const NOMINAL_GAP_MS = 50;

interface StreamsResult {
  gaps: Summary;
  /** Streams that ended with fewer words than asked (errors or cut-offs). */
  incomplete: number;
  /** The distinct reasons of streams that failed outright, with counts. */
  errors: string[];
  peakRss: number;
}

/** Samples a process's resident memory while `work` runs; returns the peak. */
async function withPeakRss(server: ServerProcess, work: () => Promise<void>): Promise<number> {
  let peak = server.rss();
  const timer = setInterval(() => {
    const rss = server.rss();
    if (rss > peak) peak = rss;
  }, 100);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, server.rss());
}

async function runStreams(
  server: ServerProcess,
  count: number,
  words: number,
  open: (index: number) => Promise<Response>,
): Promise<StreamsResult> {
  const timings: StreamTiming[] = [];
  const errors = new Map<string, number>();
  const peakRss = await withPeakRss(server, async () => {
    await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        try {
          timings.push(await readStream(await open(index), performance.now()));
        } catch (error) {
          const reason = describeError(error).slice(0, 120);
          errors.set(reason, (errors.get(reason) ?? 0) + 1);
        }
      }),
    );
  });
  // A gap is the wait between two reads that brought text: words that arrive together in one read
  // are one update on the screen, not gaps of zero.
  const gaps: number[] = [];
  for (const { deltaTimes } of timings) {
    const reads = [...new Set(deltaTimes)];
    for (let index = 1; index < reads.length; index++)
      gaps.push((reads[index] ?? 0) - (reads[index - 1] ?? 0));
  }
  const failures = [...errors.values()].reduce((total, count) => total + count, 0);
  const incomplete = failures + timings.filter((timing) => timing.deltaTimes.length < words).length;
  return {
    gaps: summarize(gaps),
    incomplete,
    errors: [...errors].map(([reason, count]) => `${count}x ${reason}`),
    peakRss,
  };
}

/**
 * N streams at once, 20 words a second each: the p99 gap between text deltas as a client sees it
 * (nominal 50 ms), and the servers' peak resident memory meanwhile.
 */
export async function measureStreams(context: BenchContext): Promise<Row[]> {
  const { mode, session } = context;
  const words = mode.streamWords;
  const text = (index: number) => `Stream ${index}, please. [[words:${words}]] [[delay:${NOMINAL_GAP_MS}]]`;
  const rows: Row[] = [];
  for (const count of mode.streams) {
    context.log(`streams: ${count} on the baseline`);
    const baseline = await runStreams(context.baseline, count, words, (index) =>
      sendBaseline(context.baseline.baseUrl, text(index)),
    );
    context.log(`streams: creating ${count} threads`);
    const threads: string[] = [];
    await inParallel(
      Array.from({ length: count }, (_, index) => index),
      20,
      async () => {
        threads.push(await session.createThread());
      },
    );
    context.log(`streams: ${count} on the app`);
    // Past the instance's start slots a send is shed (`503 overloaded`) and sent again, as the web
    // app does; a stream's gaps are timed from its answer, whenever it started.
    let shed = 0;
    const app = await runStreams(context.api, count, words, async (index) => {
      const { response, retries } = await session.sendUntilStarted(threads[index] ?? '', text(index));
      shed += retries;
      return response;
    });
    const atTargetSize = count === 500;
    const incomplete =
      baseline.incomplete + app.incomplete > 0
        ? `; incomplete streams: baseline ${baseline.incomplete}, app ${app.incomplete} (${[...baseline.errors, ...app.errors].join('; ')})`
        : '';
    rows.push({
      id: `streams-${count}`,
      figure: `${count} concurrent streams, 20 words/s each: gap between chunks`,
      unit: 'ms',
      baseline: baseline.gaps,
      app: app.gaps,
      ratio: app.gaps.n > 0 ? `p99 x${(app.gaps.p99 / baseline.gaps.p99).toFixed(2)}` : '-',
      target: atTargetSize ? 'p99 <= 75 ms (nominal 50)' : count > 500 ? 'report' : 'p99 <= 75 ms at 500',
      met: atTargetSize ? app.gaps.p99 <= 75 : undefined,
      note: `${words} words per stream${shed > 0 ? `; app sends shed and sent again after Retry-After: ${shed}` : ''}${incomplete}${app.gaps.n === 0 ? '; every app stream arrived in one read' : ''}`,
    });
    rows.push({
      id: `rss-streams-${count}`,
      figure: `resident memory, peak during ${count} streams`,
      unit: 'MB',
      baseline: baseline.peakRss / MB,
      app: app.peakRss / MB,
      ratio: `x${(app.peakRss / baseline.peakRss).toFixed(1)}`,
      target: atTargetSize ? '<= 1 GB at 500 streams' : count > 500 ? 'report' : '<= 1 GB at 500 streams',
      met: atTargetSize ? app.peakRss <= 1024 * MB : undefined,
    });
  }
  return rows;
}
