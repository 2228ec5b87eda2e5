import type { ThreadDetail } from '@chat/contracts';
import type { Fault, FaultKind, FaultLab } from './lab';
import { sleepUntil } from './lab';
import { findLosses } from './losses';
import { LONGEST_AIM_MS, play, type ScenarioName, ScenarioRun } from './scenarios';
import { seededRandom } from './seed';

/** How long after recovery a thread may take to settle (a reply still streaming, a retried settle). */
const SETTLE_WITHIN_MS = 120_000;

export interface FaultCaseResult {
  losses: string[];
  /** What happened in each scenario and what was lost, for the failure message. */
  report: string;
}

/**
 * One fault case: the scenarios play at once, each on its own thread, timed so that the one fault
 * (`kind`, injected for all of them at the same moment) hits each at the point its seed chose.
 * After recovery, each thread is brought to rest (a pending approval is approved) and checked.
 */
export async function runFaultCase(
  lab: FaultLab,
  kind: FaultKind,
  seed: number,
  scenarios: readonly ScenarioName[],
): Promise<FaultCaseResult> {
  const random = seededRandom(seed);
  const runs = await Promise.all(
    scenarios.map((name) => ScenarioRun.open(lab, name, random.fork(name), `${seed.toString(36)}-${name}`)),
  );
  const faultAt = Date.now() + LONGEST_AIM_MS + 500;
  const playing = runs.map((run) =>
    play(run, faultAt).catch((error: unknown) => run.tell(`its play stopped: ${(error as Error).message}`)),
  );
  await sleepUntil(faultAt);
  const reply = runs.find((run) => run.name === 'reply');
  const fault = await lab.inject(kind, () => {
    // A send while the database is away: refused, or accepted and then kept.
    if (reply) reply.inFlight.push(reply.send(`${reply.tag} sent during the outage [[words:3]]`));
  });
  for (const run of runs) run.tell(landing(run, fault));
  await Promise.all(playing);

  const results = await Promise.all(runs.map((run) => settleAndCheck(lab, run, fault)));
  const losses = results.flatMap((result, index) => result.map((loss) => `${runs[index]?.name}: ${loss}`));
  const report = [
    `fault ${kind}, seed ${seed}`,
    ...runs.map((run, index) =>
      [
        `  ${run.name} (thread ${run.threadId}):`,
        ...run.story.map((line) => `    - ${line}`),
        ...(results[index] ?? []).map((loss) => `    LOST: ${loss}`),
      ].join('\n'),
    ),
  ].join('\n');
  return { losses, report };
}

/** Where the fault hit this scenario's replies, as its client saw them. */
function landing(run: ScenarioRun, fault: Fault): string {
  const at = fault.kind === 'outage' ? fault.from : fault.at;
  const endedBefore = run.views.filter((view) => view.finish && view.finish.at < at);
  const hit = run.views.filter((view) => !endedBefore.includes(view) && view.startedAt < at);
  const seen = hit.map((view) => {
    const words = view.textSeen(at).join(' ').trim().split(/\s+/).filter(Boolean).length;
    const tools = view.toolResultsSeen(at).length;
    const boundary = view.boundaries.findLast((candidate) => candidate.at < at);
    const lastWordAt = view.messages
      .flatMap((message) => message.deltas.map((delta) => delta.at))
      .filter((time) => time < at)
      .at(-1);
    const latest = lastWordAt !== undefined ? `, its latest word ${at - lastWordAt} ms before` : '';
    return (
      `a reply at ${words} words${tools ? ` and ${tools} tool results` : ''}` +
      `${boundary ? `, ${at - boundary.at} ms after a steer boundary` : ''}${latest}`
    );
  });
  const lastEnd = Math.max(...endedBefore.map((view) => view.finish?.at ?? 0));
  if (endedBefore.length > 0)
    seen.push(`${endedBefore.length} replies ended before it (the last ${at - lastEnd} ms before)`);
  const what =
    fault.kind === 'outage'
      ? `database stopped for ${Math.round((fault.to - fault.from) / 1000)} s`
      : fault.kind === 'kill'
        ? 'killed'
        : 'no fault (the control)';
  return `${what}; the client had seen: ${seen.length > 0 ? seen.join('; ') : 'no reply yet'}`;
}

/** Waits for the thread to come to rest, approving what waits for a person, then checks it. */
async function settleAndCheck(lab: FaultLab, run: ScenarioRun, fault: Fault): Promise<string[]> {
  await Promise.allSettled(run.inFlight);
  const deadline = Date.now() + SETTLE_WITHIN_MS;
  let detail: ThreadDetail | undefined;
  for (;;) {
    await Promise.race([Promise.all(run.views.map((view) => view.done)), sleepUntil(deadline)]);
    detail = await readDetail(run, deadline);
    const active = detail?.turnQueue.activeTurn;
    if (!active) break;
    if (Date.now() > deadline) break;
    if (active.status === 'awaiting_approval') await run.approvePending();
    else await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!detail) return [`the thread could not be read for ${SETTLE_WITHIN_MS / 1000} s after recovery`];
  const losses = await findLosses(lab.postgres, detail, run.evidence(fault));
  const unended = run.views.filter((view) => !view.ended).length;
  if (unended > 0) losses.push(`${unended} reply streams never ended`);
  if (detail.turnQueue.activeTurn && detail.turnQueue.activeTurn.status !== 'running')
    losses.push(
      `turn ${detail.turnQueue.activeTurn.id} is still ${detail.turnQueue.activeTurn.status} ` +
        `${SETTLE_WITHIN_MS / 1000} s after recovery`,
    );
  return losses;
}

/**
 * The thread's detail. Right after a recovery the API may still answer `503` for a moment (its
 * connections come back one by one); that is retried until `deadline`, then undefined.
 */
async function readDetail(run: ScenarioRun, deadline: number): Promise<ThreadDetail | undefined> {
  for (;;) {
    const { status, body } = await run.client
      .json<ThreadDetail>('GET', `/api/threads/${run.threadId}`)
      .catch(() => ({ status: 0, body: undefined }));
    if (status === 200 && body) return body;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
