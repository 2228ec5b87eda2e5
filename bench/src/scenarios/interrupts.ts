import { firstDeltaThenDrain, readStream } from '../http';
import { type Row, ratioText } from '../rows';
import { repeat, summarize } from '../stats';
import { type BenchContext, sendBaseline } from './context';

/** A reply that would run for 20 s: long enough to be stopped mid-stream every time. */
const SLOW = 'Tell me a long story. [[words:400]] [[delay:50]]';
const NEXT = 'And now something short. [[words:3]] [[delay:0]]';

/**
 * Stop & send (queue a message while a slow reply streams, then send it now) -> first delta of the
 * new turn; and interrupt -> answer. The baseline's nearest equivalent of Stop & send is dropping
 * the slow request and sending a new one.
 */
export async function measureInterrupts(context: BenchContext): Promise<Row[]> {
  const { mode, session } = context;

  const baselineStopSend = await repeat(
    mode.stopIterations,
    async () => {
      const slowRequest = new AbortController();
      const slow = firstDeltaThenDrain(
        await sendBaseline(context.baseline.baseUrl, SLOW, slowRequest.signal),
        performance.now(),
      );
      await slow.firstDelta;
      const startedAt = performance.now();
      slowRequest.abort();
      const timing = await readStream(await sendBaseline(context.baseline.baseUrl, NEXT), startedAt);
      await slow.done.catch(() => {});
      return timing.firstDeltaMs;
    },
    { warmup: 1 },
  );

  // The sends that set a measurement up go again after a 503's Retry-After (a busy machine may
  // shed them, L1); only what follows them is timed.
  const stopSend = await repeat(
    mode.stopIterations,
    async () => {
      const threadId = await session.createThread();
      const slow = firstDeltaThenDrain(
        (await session.sendUntilStarted(threadId, SLOW)).response,
        performance.now(),
      );
      await slow.firstDelta;
      const { response: queued } = await session.sendUntilStarted(threadId, NEXT);
      if (queued.status !== 202) throw new Error(`queueing: expected 202, got ${queued.status}`);
      const { turn } = (await queued.json()) as { turn: { id: string } };
      const startedAt = performance.now();
      const response = await session.fetch('POST', `/api/threads/${threadId}/queue/${turn.id}/send-now`);
      const timing = await readStream(response, startedAt);
      await slow.done;
      return timing.firstDeltaMs;
    },
    { warmup: 1 },
  );

  const interrupt = await repeat(
    mode.stopIterations,
    async () => {
      const threadId = await session.createThread();
      const slow = firstDeltaThenDrain(
        (await session.sendUntilStarted(threadId, SLOW)).response,
        performance.now(),
      );
      await slow.firstDelta;
      const startedAt = performance.now();
      const response = await session.fetch('POST', `/api/threads/${threadId}/interrupt`);
      await response.arrayBuffer();
      const elapsed = performance.now() - startedAt;
      if (response.status !== 200) throw new Error(`interrupt: ${response.status}`);
      await slow.done;
      return elapsed;
    },
    { warmup: 1 },
  );

  const stopSendRow = { baseline: summarize(baselineStopSend), app: summarize(stopSend) };
  const interruptRow = summarize(interrupt);
  return [
    {
      id: 'stop-send',
      figure: 'Stop & send -> first delta of the next turn',
      unit: 'ms',
      ...stopSendRow,
      ratio: ratioText(stopSendRow.app, stopSendRow.baseline),
      target: '<= 25 ms (median)',
      met: stopSendRow.app.median <= 25,
      note: 'baseline: drop the slow request and send a new one',
    },
    {
      id: 'interrupt',
      figure: 'interrupt -> answer (lock clear)',
      unit: 'ms',
      app: interruptRow,
      target: '<= 20 ms (median)',
      met: interruptRow.median <= 20,
    },
  ];
}
