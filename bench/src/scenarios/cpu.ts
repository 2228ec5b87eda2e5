import { readStream } from '../http';
import type { ServerProcess } from '../processes';
import type { Row } from '../rows';
import { type Summary, summarize } from '../stats';
import { type BenchContext, sendBaseline } from './context';

/** The issue's short turn: a five-word reply, no pacing. */
const SHORT_TURN = 'How are you today? [[words:5]] [[delay:0]]';
/** A thread takes this many turns, so a measured turn is one of a short chat's first few. */
const TURNS_PER_THREAD = 5;
const ROUNDS = 3;

/**
 * The CPU time a server process spends on `turns` short turns, one after another, read from
 * /proc before and after: process CPU time does not grow when other work shares the machine,
 * as wall time does. Returns milliseconds of CPU per turn.
 */
async function cpuPerTurn(
  server: ServerProcess,
  turns: number,
  prepare: () => Promise<() => Promise<Response>>,
): Promise<number> {
  // What a turn needs beforehand (its thread) is made outside the measured window.
  const sends = [];
  for (let index = 0; index < turns; index++) sends.push(await prepare());
  const before = server.cpuMs();
  for (const send of sends) await readStream(await send(), performance.now());
  return (server.cpuMs() - before) / turns;
}

/**
 * API process CPU per short turn beside the baseline's (issue target: at most 2x), in rounds so
 * the spread shows. A round's turns run one after another; each app turn is a send on one of the
 * guest's threads (a new thread every few turns), read to its end.
 */
export async function measureCpu(context: BenchContext): Promise<Row[]> {
  const { mode, session } = context;
  const turns = mode.cpuTurns;
  const baselineRounds: number[] = [];
  const appRounds: number[] = [];
  const baselineSend = async () => () => sendBaseline(context.baseline.baseUrl, SHORT_TURN);
  let threadId = '';
  let onThread = TURNS_PER_THREAD;
  let shed = 0;
  const appSend = async () => {
    if (onThread >= TURNS_PER_THREAD) {
      threadId = await session.createThread();
      onThread = 0;
    }
    onThread++;
    const thread = threadId;
    // Turns go one after another, so a quiet machine sheds none; on a busy one the API may answer
    // `503 overloaded` (its event loop behind), and the send goes again after Retry-After, as the
    // web app's would: a shed costs next to no CPU, and the round keeps its turns.
    return async () => {
      const { response, retries } = await session.sendUntilStarted(thread, SHORT_TURN);
      shed += retries;
      return response;
    };
  };
  // Warm both (JIT, pools, caches) before the first round.
  await cpuPerTurn(context.baseline, mode.warmup * 2, baselineSend);
  await cpuPerTurn(context.api, mode.warmup * 2, appSend);
  for (let round = 0; round < ROUNDS; round++) {
    baselineRounds.push(await cpuPerTurn(context.baseline, turns, baselineSend));
    appRounds.push(await cpuPerTurn(context.api, turns, appSend));
  }
  const baseline: Summary = summarize(baselineRounds);
  const app: Summary = summarize(appRounds);
  const ratio = app.median / baseline.median;
  return [
    {
      id: 'cpu-per-turn',
      figure: `process CPU time per short turn (${ROUNDS} rounds of ${turns} turns, one after another)`,
      unit: 'ms',
      baseline,
      app,
      ratio: `x${ratio.toFixed(1)}`,
      target: '<= 2x the baseline (median of rounds)',
      met: ratio <= 2,
      note: `rounds: baseline ${baselineRounds.map((ms) => ms.toFixed(1)).join(', ')} ms; app ${appRounds
        .map((ms) => ms.toFixed(1))
        .join(', ')} ms${shed > 0 ? `; app sends shed and sent again after Retry-After: ${shed}` : ''}`,
    },
  ];
}
