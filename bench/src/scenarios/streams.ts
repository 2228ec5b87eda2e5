import { describeError } from '../errors';
import { lightRequest, readStream, type StreamAnswer, type StreamTiming } from '../http';
import { onProcesses, type ServerProcess } from '../processes';
import { MB, type Row } from '../rows';
import {
  cpuShares,
  describePeakRss,
  describeShares,
  type PeakRss,
  type ProcessShare,
  sampleRss,
  sumShares,
} from '../stallWatch';
import { type Summary, summarize } from '../stats';
import { type BenchContext, inParallel } from './context';

/** 20 words a second: one word every 50 ms. */
const NOMINAL_GAP_MS = 50;

interface StreamsResult {
  gaps: Summary;
  /** Streams that ended with fewer words than asked (errors or cut-offs). */
  incomplete: number;
  /** The distinct reasons of streams that failed outright, with counts. */
  errors: string[];
  peakRss: PeakRss;
  /** Each process's CPU over the streams, as a share of one core (the supervisor first). */
  cpu: ProcessShare[];
  /** The server's CPU time over the streams (every process's), per text delta its clients read. */
  cpuPerDeltaUs: number;
}

async function runStreams(
  server: ServerProcess,
  count: number,
  words: number,
  open: (index: number) => Promise<StreamAnswer>,
): Promise<StreamsResult> {
  const timings: StreamTiming[] = [];
  const errors = new Map<string, number>();
  const rss = sampleRss(server);
  const cpuBefore = server.processes();
  const startedAt = performance.now();
  // Each stream catches its own failure: this never throws.
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
  const spanMs = performance.now() - startedAt;
  const cpu = cpuShares(cpuBefore, server.processes(), spanMs);
  const peakRss = rss.stop();
  // A gap is the wait between two reads that brought text: words that arrive together in one read
  // are one update on the screen, not gaps of zero.
  const gaps: number[] = [];
  for (const { deltaTimes } of timings) {
    const reads = [...new Set(deltaTimes)];
    for (let index = 1; index < reads.length; index++)
      gaps.push((reads[index] ?? 0) - (reads[index - 1] ?? 0));
  }
  const deltas = timings.reduce((total, timing) => total + timing.deltaTimes.length, 0);
  const failures = [...errors.values()].reduce((total, count) => total + count, 0);
  const incomplete = failures + timings.filter((timing) => timing.deltaTimes.length < words).length;
  return {
    gaps: summarize(gaps),
    incomplete,
    errors: [...errors].map(([reason, count]) => `${count}x ${reason}`),
    peakRss,
    cpu,
    cpuPerDeltaUs: deltas > 0 ? (sumShares(cpu) * spanMs * 1000) / deltas : 0,
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
    // Both read through `lightRequest`: a thousand answers open at once in this one process.
    const baseline = await runStreams(context.baseline, count, words, (index) =>
      lightRequest(`${context.baseline.baseUrl}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: text(index) }),
      }),
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
      const { response, retries } = await session.lightSendUntilStarted(threads[index] ?? '', text(index));
      shed += retries;
      return response;
    });
    // Issue 24's targets at 500 streams, issue 40's gap at 1,000 (on the API as deployed).
    const atTargetSize = count === 500 || count === 1_000;
    const incomplete =
      baseline.incomplete + app.incomplete > 0
        ? `; incomplete streams: baseline ${baseline.incomplete}, app ${app.incomplete} (${[...baseline.errors, ...app.errors].join('; ')})`
        : '';
    rows.push({
      id: `streams-${count}`,
      figure: `${count} concurrent streams, 20 words/s each (${onProcesses(context.api)}): gap between chunks`,
      unit: 'ms',
      baseline: baseline.gaps,
      app: app.gaps,
      ratio: app.gaps.n > 0 ? `p99 x${(app.gaps.p99 / baseline.gaps.p99).toFixed(2)}` : '-',
      target: atTargetSize ? 'p99 <= 75 ms (nominal 50)' : 'p99 <= 75 ms at 500 and 1,000',
      met: atTargetSize ? app.gaps.p99 <= 75 : undefined,
      note: `${words} words per stream; API CPU ${(sumShares(app.cpu) * 100).toFixed(0)}% of one core${describeShares(app.cpu)}, ${app.cpuPerDeltaUs.toFixed(0)} us a text delta (baseline ${baseline.cpuPerDeltaUs.toFixed(0)} us)${shed > 0 ? `; app sends shed and sent again after Retry-After: ${shed}` : ''}${incomplete}${app.gaps.n === 0 ? '; every app stream arrived in one read' : ''}`,
    });
    rows.push({
      id: `rss-streams-${count}`,
      figure: `resident memory, peak during ${count} streams (all the API's processes summed)`,
      unit: 'MB',
      baseline: baseline.peakRss.sum / MB,
      app: app.peakRss.sum / MB,
      ratio: `x${(app.peakRss.sum / baseline.peakRss.sum).toFixed(1)}`,
      target: count === 500 ? '<= 1 GB at 500 streams' : count > 500 ? 'report' : '<= 1 GB at 500 streams',
      met: count === 500 ? app.peakRss.sum <= 1024 * MB : undefined,
      note: describePeakRss(app.peakRss),
    });
  }
  return rows;
}
