import type { ServerProcess } from '../processes';
import type { Row } from '../rows';
import { summarize } from '../stats';
import type { BenchContext } from './context';

const PACED = 'Follow me from elsewhere. [[words:60]] [[delay:50]]';

/** Arrival times (performance.now()) of each chunk of a turn's stream, in order. */
async function chunkTimes(response: Response): Promise<number[]> {
  if (response.status !== 200) throw new Error(`attach: ${response.status} ${await response.text()}`);
  const times: number[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body ?? []) {
    const now = performance.now();
    buffer += decoder.decode(bytes, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      if (buffer.slice(0, end).startsWith('data: {')) times.push(now);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
    }
  }
  return times;
}

/**
 * Two API processes on one database: a viewer attached through the other instance follows a
 * running reply. For each chunk, how much later it reaches that viewer than a viewer attached
 * through the instance running the turn (both attach at the same moment, mid-reply).
 */
export async function measureAttachLag(context: BenchContext, second: ServerProcess): Promise<Row[]> {
  const { mode, session, api } = context;
  const viaOther = session.via(second.baseUrl);
  const lags: number[] = [];
  let mismatched = 0;
  for (let turn = 0; turn < mode.attachTurns; turn++) {
    const threadId = await session.createThread();
    const response = await session.send(threadId, PACED);
    const turnId = response.headers.get('x-turn-id');
    // The sender's own stream is drained; the viewers attach a few words in.
    const drained = response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const path = `/api/threads/${threadId}/turns/${turnId}/stream`;
    const [here, there] = await Promise.all([
      session.fetch('GET', path).then(chunkTimes),
      viaOther.fetch('GET', path).then(chunkTimes),
    ]);
    await drained;
    if (here.length !== there.length) mismatched++;
    // The replayed beginning arrives at once on both; the live chunks are what lag measures.
    const live = Math.min(here.length, there.length);
    for (let index = Math.floor(live / 4); index < live; index++)
      lags.push((there[index] ?? 0) - (here[index] ?? 0));
  }
  const lag = summarize(lags);
  return [
    {
      id: 'attach-lag',
      figure: `a viewer on another API instance, behind a viewer on the running one (per chunk, ${mode.attachTurns} paced replies)`,
      unit: 'ms',
      app: lag,
      target: '<= 100 ms (median)',
      met: lag.n > 0 ? lag.median <= 100 : false,
      note: `${api.baseUrl} runs the turns, ${second.baseUrl} relays them${mismatched > 0 ? `; ${mismatched} streams differed in length` : ''}`,
    },
  ];
}
