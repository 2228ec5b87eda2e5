import { readStream } from '../http';
import { type Row, ratioText } from '../rows';
import { repeat, summarize } from '../stats';
import { type BenchContext, sendBaseline } from './context';

const SHORT_TURN = 'How are you today? [[words:20]] [[delay:0]]';
/** A fresh thread every few turns keeps the thread short, as a new chat's first turns are. */
const TURNS_PER_THREAD = 10;

/** Send -> first text delta, and the whole short turn, app beside the bare baseline. */
export async function measureLatency(context: BenchContext): Promise<Row[]> {
  const { mode, session } = context;
  const iterations = mode.latencyIterations;

  const baselineFirst: number[] = [];
  const baselineWhole: number[] = [];
  await repeat(
    iterations,
    async (index) => {
      const startedAt = performance.now();
      const timing = await readStream(await sendBaseline(context.baseline.baseUrl, SHORT_TURN), startedAt);
      if (index >= 0) {
        baselineFirst.push(timing.firstDeltaMs);
        baselineWhole.push(timing.endMs);
      }
      return timing.endMs;
    },
    { warmup: mode.warmup },
  );

  const appFirst: number[] = [];
  const appWhole: number[] = [];
  let threadId = '';
  let turnsOnThread = TURNS_PER_THREAD;
  await repeat(
    iterations,
    async (index) => {
      if (turnsOnThread >= TURNS_PER_THREAD) {
        threadId = await session.createThread();
        turnsOnThread = 0;
      }
      turnsOnThread++;
      let startedAt = performance.now();
      let response = await session.send(threadId, SHORT_TURN);
      // A busy machine may shed the send (503 overloaded, L1): nothing was sent, so it goes again
      // after Retry-After and is timed from there (this figure is a send that starts).
      while (response.status === 503) {
        await response.arrayBuffer();
        const seconds = Number(response.headers.get('retry-after')) || 1;
        await new Promise((resolve) => setTimeout(resolve, seconds * 1_000));
        startedAt = performance.now();
        response = await session.send(threadId, SHORT_TURN);
      }
      const timing = await readStream(response, startedAt);
      if (index >= 0) {
        appFirst.push(timing.firstDeltaMs);
        appWhole.push(timing.endMs);
      }
      return timing.endMs;
    },
    { warmup: mode.warmup },
  );

  const first = { baseline: summarize(baselineFirst), app: summarize(appFirst) };
  const whole = { baseline: summarize(baselineWhole), app: summarize(appWhole) };
  return [
    {
      id: 'first-delta',
      figure: 'send -> first text delta',
      unit: 'ms',
      ...first,
      ratio: ratioText(first.app, first.baseline),
      target: '<= +5 ms over the baseline (median; issue 38)',
      met: first.app.median - first.baseline.median <= 5,
    },
    {
      id: 'whole-turn',
      figure: 'whole short turn (20 words)',
      unit: 'ms',
      ...whole,
      ratio: ratioText(whole.app, whole.baseline),
      target: '<= 3x the baseline (median)',
      met: whole.app.median <= 3 * whole.baseline.median,
    },
  ];
}
