import { describeError } from '../errors';
import { firstDeltaThenDrain, lightRequest, type Session } from '../http';
import { Probe } from '../probe';
import { onProcesses } from '../processes';
import type { Row } from '../rows';
import { describeStalls, watchForStalls } from '../stallWatch';
import { summarize } from '../stats';
import { type BenchContext, inParallel } from './context';

const SHORT_TURN = 'Quick one. [[words:5]] [[delay:0]]';
const SLOW = 'A slow one to stop. [[words:400]] [[delay:50]]';
/** When the Stops and reads of the burst are sent, after its first send (ms). */
const PROBE_TIMES_MS = [50, 300, 600];
const probeTimesText = `${PROBE_TIMES_MS.join(', ')} ms into it`;
const msList = (times: number[]) =>
  times.map((ms) => (Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : 'not answered 200')).join(', ');

interface SendResult {
  status: number;
  /** Milliseconds from the request to its response headers (NaN when it failed outright). */
  headersMs: number;
  error?: string;
}

/**
 * One send, timed to its response headers; its answer is then read to its end in the background.
 * Through `lightRequest`, not `fetch`: the rate and the burst make hundreds of requests at once.
 */
async function timedSend(
  session: Session,
  threadId: string,
  clientRequestId = crypto.randomUUID(),
): Promise<SendResult & { done: Promise<void> }> {
  const startedAt = performance.now();
  try {
    const response = await lightRequest(`${session.baseUrl}/api/threads/${threadId}/turns`, {
      method: 'POST',
      headers: { ...session.requestHeaders(), 'content-type': 'application/json' },
      body: JSON.stringify({ clientRequestId, text: SHORT_TURN }),
    });
    const headersMs = performance.now() - startedAt;
    const done = response.text().then(() => undefined);
    return { status: response.status, headersMs, done: done.catch(() => undefined) };
  } catch (error) {
    return { status: 0, headersMs: Number.NaN, error: describeError(error), done: Promise.resolve() };
  }
}

/** `sendBaseline` with the same client as `timedSend`: the time to its headers, then read to its end. */
async function timedBareSend(baseUrl: string): Promise<number> {
  const at = performance.now();
  try {
    const response = await lightRequest(`${baseUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: SHORT_TURN }),
    });
    const headersMs = performance.now() - at;
    await response.text();
    return headersMs;
  } catch {
    return Number.NaN;
  }
}

/** Guests and an idle thread per send, made before anything is timed. */
async function idleThreads(context: BenchContext, count: number, accounts: number) {
  const sessions: Session[] = [context.session];
  while (sessions.length < accounts) sessions.push(await context.session.anotherGuest());
  const threads: Array<{ session: Session; threadId: string }> = [];
  await inParallel(
    Array.from({ length: count }, (_, index) => index),
    20,
    async (index) => {
      const session = sessions[index % sessions.length] as Session;
      threads.push({ session, threadId: await session.createThread() });
    },
  );
  return threads;
}

function countStatuses(results: SendResult[]): string {
  const counts = new Map<string, number>();
  for (const result of results) {
    const key = result.status === 0 ? `failed (${result.error?.slice(0, 60)})` : String(result.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort()
    .map(([status, count]) => `${count}x ${status}`)
    .join(', ');
}

/** The p99 time to headers of some answers, or "none" when there were none (no 503 in a small burst). */
function p99Text(results: SendResult[]): string {
  return results.length === 0
    ? 'none'
    : `${summarize(results.map((result) => result.headersMs)).p99.toFixed(0)} ms`;
}

/** Issue 40: at least 150 started a second with p99 < 1 s; a slower pace must start every send. */
const RATE_TARGET = 150;

function rateTarget(rate: number): { text: string; startedPerS: number } {
  if (rate >= RATE_TARGET)
    return { text: `>= ${RATE_TARGET} started/s, p99 < 1 s`, startedPerS: RATE_TARGET };
  // Every send started: the span runs to the last answer, so a full pace reads a little under it.
  return { text: `all ${rate}/s started, p99 < 1 s`, startedPerS: rate * 0.98 };
}

/**
 * Sustained new turns: sends arrive at a fixed pace (open loop: one every 1/rate s, whatever the
 * answers do), each on an idle thread, each short reply read to its end. How many the API started
 * (200), how many it shed (503 overloaded), and the time to response headers.
 */
export async function measureSustainedRate(context: BenchContext): Promise<Row[]> {
  const { mode } = context;
  const rows: Row[] = [];
  for (const rate of mode.rates) {
    const count = Math.round(rate * mode.rateSeconds);
    context.log(`rate: ${count} sends at ${rate}/s`);
    const threads = await idleThreads(context, count, Math.min(100, count));
    const results: Array<SendResult & { done: Promise<void> }> = [];
    const sends: Array<Promise<void>> = [];
    const watch = await watchForStalls(context.api);
    const startedAt = performance.now();
    for (let index = 0; index < count; index++) {
      const due = startedAt + (index * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const { session, threadId } = threads[index] as { session: Session; threadId: string };
      sends.push(timedSend(session, threadId).then((result) => void results.push(result)));
    }
    await Promise.all(sends);
    const spanS = (performance.now() - startedAt) / 1000;
    const stalls = await watch.stop();
    await Promise.all(results.map((result) => result.done));
    const started = results.filter((result) => result.status === 200);
    const headers = summarize(started.map((result) => result.headersMs));
    const startedPerS = started.length / spanS;
    rows.push({
      id: `rate-${rate}`,
      figure: `${rate} new turns a second for ${mode.rateSeconds} s (open loop, short replies, ${onProcesses(context.api)}): time to response headers of those started`,
      unit: 'ms',
      app: headers,
      ratio: `${startedPerS.toFixed(0)} started/s`,
      target: rateTarget(rate).text,
      met: mode.quick ? undefined : startedPerS >= rateTarget(rate).startedPerS && headers.p99 < 1_000,
      note: `${countStatuses(results)}; ${describeStalls(stalls)}`,
    });
  }
  return rows;
}

/**
 * 1,000 sends at once (100 accounts, 1,000 idle threads): what each is answered and how soon.
 * Shed sends (503 overloaded) are then sent again after their Retry-After, as the web app does,
 * until every one started. Meanwhile a Stop of a running reply and a thread read are timed.
 */
export async function measureBurst(context: BenchContext): Promise<Row[]> {
  const { mode } = context;
  const count = mode.burst;
  context.log(`burst: preparing ${count} idle threads`);
  const threads = await idleThreads(context, count, Math.min(100, count));
  // The floor: the same number of short chats at once against the bare baseline (one process, no
  // auth, no database), each read to its end. It is what this machine and this client take for
  // 1,000 requests at once before the app does anything.
  context.log(`burst: ${count} bare sends at once`);
  const bare = await Promise.all(
    Array.from({ length: count }, () => timedBareSend(context.baseline.baseUrl)),
  );
  const bareHeaders = summarize(bare.filter(Number.isFinite));

  // Three replies to stop, one at each probe time: a Stop ends its reply, so each needs its own.
  const stopThreads = await Promise.all(PROBE_TIMES_MS.map(() => context.session.createThread()));
  const slows = await Promise.all(
    stopThreads.map(async (threadId) =>
      firstDeltaThenDrain(await context.session.send(threadId, SLOW), performance.now()),
    ),
  );
  await Promise.all(slows.map((slow) => slow.firstDelta));

  // The reads and the Stops come from one person's browser, not from the crowd: a process of their
  // own, on connections it opened before (as a browser that has the chat open keeps them). One read
  // and one Stop at each of the probe times into the burst, so the row is not one sample.
  const probe = await Probe.start(
    context.session.baseUrl,
    stopThreads.flatMap((threadId, index) => [
      {
        method: 'GET' as const,
        path: `/api/threads/${threadId}`,
        headers: context.session.requestHeaders(),
        delayMs: PROBE_TIMES_MS[index],
      },
      {
        method: 'POST' as const,
        path: `/api/threads/${threadId}/interrupt`,
        headers: context.session.requestHeaders(),
        delayMs: PROBE_TIMES_MS[index],
      },
    ]),
    PROBE_TIMES_MS[0] ?? 50,
  );
  context.log(`burst: ${count} sends at once`);
  const ids = threads.map(() => crypto.randomUUID());
  const watch = await watchForStalls(context.api);
  // While the burst is being answered: the reads and the Stops.
  const probed = probe.fire();
  const startedAt = performance.now();
  const burst = Promise.all(
    threads.map(({ session, threadId }, index) => timedSend(session, threadId, ids[index])),
  );
  const answers = await probed.finally(() => probe.stop());
  // NaN: one was not answered 200.
  const timesOf = (kind: 0 | 1) =>
    answers
      .filter((_, index) => index % 2 === kind)
      .map((answer) => (answer.status === 200 ? answer.ms : Number.NaN));
  const reads = timesOf(0);
  const stops = timesOf(1);
  const readMs = Math.max(...reads);
  const stopMs = Math.max(...stops);
  const first = await burst;
  const stalls = await watch.stop();
  // Every shed send again, after its wait, with the same clientRequestId, until all started.
  let retries = 0;
  const allStarted = await Promise.all(
    first.map(async (result, index) => {
      let current = result;
      while (current.status === 503) {
        retries++;
        await new Promise((resolve) => setTimeout(resolve, 1_000 * (1 + Math.random() / 2)));
        const { session, threadId } = threads[index] as { session: Session; threadId: string };
        current = await timedSend(session, threadId, ids[index]);
      }
      await current.done;
      return { ok: current.status === 200 || current.status === 202, at: performance.now() - startedAt };
    }),
  );
  await Promise.all(first.map((result) => result.done));
  await Promise.all(slows.map((slow) => slow.done.catch(() => {})));
  const headers = summarize(first.map((result) => result.headersMs).filter(Number.isFinite));
  const accepted = first.filter((result) => result.status === 200);
  const shed = first.filter((result) => result.status === 503);
  const lastStartedS = Math.max(...allStarted.map((result) => result.at)) / 1000;
  return [
    {
      id: 'burst',
      figure: `${count} sends at once (${Math.min(100, count)} accounts, idle threads, ${onProcesses(context.api)}): time to response headers, all answers`,
      unit: 'ms',
      baseline: bareHeaders,
      app: headers,
      ratio: `max x${(headers.max / bareHeaders.max).toFixed(1)} (bare max ${bareHeaders.max.toFixed(0)} ms)`,
      target: 'every answer, 200 or 503, within 1 s (max); none lost',
      met: mode.quick ? undefined : headers.max < 1_000 && allStarted.every((result) => result.ok),
      note: `${countStatuses(first)}; 200s p99 ${p99Text(accepted)}, 503s p99 ${p99Text(shed)}; retried ${retries} times by Retry-After, all ${allStarted.filter((r) => r.ok).length} started within ${lastStartedS.toFixed(1)} s; ${describeStalls(stalls)}`,
    },
    // NaN: not answered 200. The quick profile only asks that they answered.
    {
      id: 'burst-stop',
      figure: `Stop of a running reply during the burst -> answer, the slowest of ${stops.length} (${probeTimesText}; from another process, on connections opened before)`,
      unit: 'ms',
      app: stopMs,
      note: `each: ${msList(stops)}`,
      target: '<= 100 ms',
      met: mode.quick ? undefined : stopMs <= 100,
    },
    {
      id: 'burst-read',
      figure: `thread read during the burst, the slowest of ${reads.length} (${probeTimesText}; from another process, on connections opened before)`,
      unit: 'ms',
      app: readMs,
      note: `each: ${msList(reads)}`,
      target: '<= 100 ms',
      met: mode.quick ? undefined : readMs <= 100,
    },
  ];
}
