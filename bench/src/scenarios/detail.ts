import { readStream } from '../http';
import { MB, type Row } from '../rows';
import { repeat, type Summary, summarize } from '../stats';
import type { BenchContext } from './context';

interface DetailMessage {
  id: string;
  role: string;
  metadata?: { version?: { index: number; count: number } };
}

interface Detail {
  messages: DetailMessage[];
}

const TURN = (index: number) => `Message ${index}. [[words:3]] [[delay:0]]`;

/**
 * Grows one thread through the real API (sends of three-word replies at zero delay, and edits into
 * new versions spread evenly along the way) and times GET thread detail at each size.
 */
export async function measureDetail(context: BenchContext): Promise<Row[]> {
  const { mode, session } = context;
  const sizes = [...mode.detailSizes].sort((a, b) => a - b);
  const largest = sizes.at(-1) ?? 0;
  const totalTurns = largest / 2;
  const editAtTurns = new Set(
    Array.from({ length: mode.versions }, (_, index) =>
      Math.max(1, Math.round((totalTurns * (index + 1)) / (mode.versions + 1))),
    ),
  );
  const threadId = await session.createThread();
  const detailPath = `/api/threads/${threadId}`;
  const rows: Row[] = [];
  const measured: Array<{ size: number; summary: Summary }> = [];
  let turns = 0;
  let edits = 0;
  let lastTurnMs: number[] = [];
  const buildStarted = Date.now();

  for (const size of sizes) {
    while (turns * 2 < size) {
      turns++;
      const startedAt = performance.now();
      // Shed sends go again as the web app's do: the fixture is what is measured here, not admission.
      const { response } = await session.sendUntilStarted(threadId, TURN(turns));
      const timing = await readStream(response, startedAt);
      lastTurnMs.push(timing.endMs);
      if (lastTurnMs.length > 50) lastTurnMs = lastTurnMs.slice(-50);
      if (editAtTurns.has(turns)) {
        const detail = await session.json<Detail>('GET', detailPath);
        const lastUser = detail.messages.findLast((message) => message.role === 'user');
        if (!lastUser) throw new Error('no user message to edit');
        const response = await session.fetch('POST', `${detailPath}/messages/${lastUser.id}/versions`, {
          clientRequestId: crypto.randomUUID(),
          text: `Message ${turns}, edited. [[words:3]] [[delay:0]]`,
        });
        await readStream(response, performance.now());
        edits++;
      }
      if (turns % 250 === 0)
        context.log(
          `detail: ${turns * 2} messages, ${edits} edits, ${Math.round((Date.now() - buildStarted) / 1000)} s`,
        );
    }

    const checked = await session.fetch('GET', detailPath);
    if (checked.status !== 200) {
      rows.push({
        id: `detail-${size}`,
        figure: `GET thread detail, ${size.toLocaleString('en-US')} messages`,
        unit: 'ms',
        notRun: `failed: the API answered ${checked.status}`,
      });
      await checked.arrayBuffer();
      break;
    }
    const check = (await checked.json()) as Detail;
    if (check.messages.length !== size)
      throw new Error(`thread detail has ${check.messages.length} messages, expected ${size}`);
    const versions = check.messages.filter((message) => (message.metadata?.version?.count ?? 1) > 1).length;
    context.log(`detail: timing GET at ${size} messages (${versions} with versions)`);
    const failures: string[] = [];
    const timed = await repeat(
      mode.detailIterations,
      async () => {
        const startedAt = performance.now();
        const response = await session.fetch('GET', detailPath);
        await response.arrayBuffer();
        const elapsed = performance.now() - startedAt;
        if (response.status !== 200) failures.push(`${response.status} after ${Math.round(elapsed)} ms`);
        return response.status === 200 ? elapsed : Number.NaN;
      },
      { warmup: 1, budgetMs: mode.detailBudgetMs },
    );
    const samples = timed.filter((value) => !Number.isNaN(value));
    const failed = failures.length > 0 ? `; failed requests: ${failures.join(', ')}` : '';
    const summary = summarize(samples);
    const first = measured[0];
    measured.push({ size, summary });
    const isTargetSize = size === 2_000;
    rows.push({
      id: `detail-${size}`,
      figure: `GET thread detail, ${size.toLocaleString('en-US')} messages (${versions} edited, with versions)`,
      unit: 'ms',
      app: summary,
      ratio: first
        ? `x${(summary.median / first.summary.median).toFixed(1)} for x${size / first.size} messages`
        : undefined,
      target: isTargetSize ? '<= 30 ms (median)' : undefined,
      met: isTargetSize ? summary.median <= 30 : undefined,
      note: `whole short turn on this thread, last ${lastTurnMs.length} turns: median ${summarize(lastTurnMs).median.toFixed(1)} ms${failed}`,
    });
  }

  const smallest = measured.find((entry) => entry.size >= 1_000) ?? measured[0];
  const biggest = measured.at(-1);
  if (smallest && biggest && biggest.size > smallest.size) {
    const exponent =
      Math.log(biggest.summary.median / smallest.summary.median) / Math.log(biggest.size / smallest.size);
    rows.push({
      id: 'detail-growth',
      figure: `thread detail growth, ${smallest.size.toLocaleString('en-US')} -> ${biggest.size.toLocaleString('en-US')} messages`,
      unit: 'ms',
      ratio: `time ~ size^${exponent.toFixed(2)}`,
      target: 'linear (exponent <= 1.2)',
      met: mode.quick ? undefined : exponent <= 1.2,
      note: mode.quick ? 'too small in --quick to judge' : undefined,
    });
  }
  rows.push({
    id: 'rss-after-detail',
    figure: 'API resident memory after the long-thread test',
    unit: 'MB',
    app: context.api.rss() / MB,
  });
  return rows;
}
