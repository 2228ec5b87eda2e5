import type { HitlRequest } from '@chat/contracts';
import { ApiClient, waitFor } from '../client';
import type { FaultLab } from './lab';
import { sleepUntil } from './lab';
import type { AcceptedSend, Evidence } from './losses';
import type { Random } from './seed';
import { StreamView } from './streamView';

/** The moments of a turn's life the suite aims its faults at. */
export type ScenarioName = 'reply' | 'settle' | 'steer' | 'approval';
export const SCENARIOS: readonly ScenarioName[] = ['reply', 'settle', 'steer', 'approval'];

/** The longest time a scenario needs from its first action to its fault point. */
export const LONGEST_AIM_MS = 10_500;

/** The settle scenario's last reply starts about this long before its end is due. */
const SETTLE_RUN_UP_MS = 2_500;

/**
 * One scenario of a fault case: its own guest and thread, the sends the API accepted, every reply
 * stream its client read, and what happened, in words, for the report.
 */
export class ScenarioRun {
  readonly sends: AcceptedSend[] = [];
  readonly views: StreamView[] = [];
  readonly story: string[] = [];
  /** Requests that may still be in flight when the fault hits (an approval sent just before it). */
  readonly inFlight: Promise<unknown>[] = [];

  private constructor(
    readonly name: ScenarioName,
    readonly random: Random,
    private readonly lab: FaultLab,
    private readonly signedIn: ApiClient,
    readonly threadId: string,
    /** Marks every text this scenario sends, so each is found by its text alone. */
    readonly tag: string,
  ) {}

  static async open(lab: FaultLab, name: ScenarioName, random: Random, tag: string): Promise<ScenarioRun> {
    // Setting up is not under test: right after a recovery an API may still refuse a moment.
    const { client, threadId } = await waitFor(
      async () => {
        try {
          const client = await ApiClient.signIn(lab.baseUrl);
          return { client, threadId: await client.createThread(`faults ${tag}`) };
        } catch {
          return undefined;
        }
      },
      (opened) => opened !== undefined,
      30_000,
    ).then((opened) => opened as { client: ApiClient; threadId: string });
    return new ScenarioRun(name, random, lab, client, threadId, tag);
  }

  /** The client, at the API's current address (a killed API comes back on another port). */
  get client(): ApiClient {
    return this.signedIn.via(this.lab.baseUrl);
  }

  tell(line: string): void {
    this.story.push(line);
  }

  /**
   * Sends `text`; an answer of 200 (a stream, which is read from here on) or 202 (queued) means it
   * was accepted. Anything else (a refusal, a broken connection) is not an acceptance.
   */
  async send(text: string, mode: 'queue' | 'steer' = 'queue'): Promise<StreamView | undefined> {
    let response: Response;
    try {
      response = await this.client.fetch('POST', `/api/threads/${this.threadId}/turns`, {
        clientRequestId: crypto.randomUUID(),
        text,
        mode,
      });
    } catch (error) {
      this.tell(`send "${text}" got no answer (${(error as Error).message})`);
      return undefined;
    }
    if (response.status === 202) {
      const { turn } = (await response.json()) as { turn: { id: string; status: string } };
      this.sends.push({ text, turnId: turn.id, status: 202 });
      this.tell(`send "${text}": 202 ${turn.status}`);
      return undefined;
    }
    if (response.status !== 200) {
      this.tell(`send "${text}": ${response.status} (not accepted)`);
      await response.body?.cancel();
      return undefined;
    }
    const turnId = response.headers.get('x-turn-id') ?? '';
    this.sends.push({ text, turnId, status: 200 });
    const view = new StreamView(turnId, response);
    this.views.push(view);
    return view;
  }

  /** Approves the thread's pending tool call, if any; the continued reply is read as a view. */
  async approvePending(): Promise<void> {
    const pending = await this.pendingApproval();
    if (pending) await this.approve(pending);
  }

  async approve(pending: HitlRequest): Promise<void> {
    let response: Response;
    try {
      response = await this.client.fetch('POST', `/api/threads/${this.threadId}/hitl/${pending.id}`, {
        decision: 'approve',
      });
    } catch (error) {
      this.tell(`approve got no answer (${(error as Error).message})`);
      return;
    }
    this.tell(`approve: ${response.status}`);
    if (response.status !== 200) {
      await response.body?.cancel();
      return;
    }
    this.views.push(new StreamView(pending.turnId, response));
  }

  async pendingApproval(): Promise<HitlRequest | undefined> {
    const { status, body } = await this.client.json<{ hitl: HitlRequest[] }>(
      'GET',
      `/api/threads/${this.threadId}`,
    );
    return status === 200 ? body.hitl.find((request) => request.status === 'pending') : undefined;
  }

  /** What the case leaves to be checked, once recovered. */
  evidence(fault: Evidence['fault']): Evidence {
    return { threadId: this.threadId, sends: this.sends, views: this.views, fault };
  }
}

/**
 * Plays scenario `run.name` so that the fault, injected at `faultAt`, hits it at a point chosen by
 * its seed. Resolves once its part before the fault is done (it may end after the fault).
 */
export async function play(run: ScenarioRun, faultAt: number): Promise<void> {
  switch (run.name) {
    case 'reply':
      return await playReply(run, faultAt);
    case 'settle':
      return await playSettle(run, faultAt);
    case 'steer':
      return await playSteer(run, faultAt);
    case 'approval':
      return await playApproval(run, faultAt);
  }
}

/** Somewhere in a streaming reply, with a send queued behind it. */
async function playReply(run: ScenarioRun, faultAt: number): Promise<void> {
  const words = run.random.int(40, 100);
  const delay = run.random.int(40, 100);
  const share = run.random.int(5, 95);
  run.tell(`a reply of ${words} words, one every ${delay} ms; the fault aimed at ${share}% of it`);
  await sleepUntil(faultAt - Math.round((words * delay * share) / 100));
  const view = await run.send(`${run.tag} a reply [[words:${words}]] [[delay:${delay}]]`);
  if (view) await run.send(`${run.tag} queued behind the reply [[words:3]]`);
}

/** Around the end of a reply: its last words, Mastra's save and the settle, the closing chunks. */
async function playSettle(run: ScenarioRun, faultAt: number): Promise<void> {
  const delay = run.random.int(30, 60);
  const offset = run.random.int(-delay, 80);
  run.tell(`a reply of a word every ${delay} ms; the fault aimed ${offset} ms from its last word`);
  // The window is narrow, and how long a send takes to its first word varies with the load: short
  // replies run back to back until the last one, sized from the latest of them, can end on aim.
  await sleepUntil(faultAt - 2 * SETTLE_RUN_UP_MS);
  let latency = 0;
  while (faultAt - Date.now() > SETTLE_RUN_UP_MS) {
    const sentAt = Date.now();
    const probe = await run.send(`${run.tag} a first reply [[words:3]] [[delay:${delay}]]`);
    if (!probe) return;
    await probe.done;
    const firstWordAt = probe.messages[0]?.deltas[0]?.at;
    if (firstWordAt !== undefined) latency = firstWordAt - sentAt;
  }
  const words = Math.max(1, Math.round((faultAt + offset - Date.now() - latency) / delay) + 1);
  run.tell(
    `its last reply: ${words} words, sent ${faultAt - Date.now()} ms before the fault (latency ${latency} ms)`,
  );
  await run.send(`${run.tag} a short reply [[words:${words}]] [[delay:${delay}]]`);
}

/** Around a steer's delivery: the steer sent after a tool step, the fault before or after its boundary. */
async function playSteer(run: ScenarioRun, faultAt: number): Promise<void> {
  const steps = run.random.int(3, 6);
  const delay = run.random.int(400, 1000);
  const after = run.random.int(0, Math.round(delay * 2.5));
  run.tell(`${steps} tool steps, ${delay} ms apart; the fault aimed ${after} ms after the steer`);
  // The first tool result comes one delay after the claim; the steer follows it.
  await sleepUntil(faultAt - after - delay - 100);
  const view = await run.send(`${run.tag} plan a trip [[steps:${steps}]] [[delay:${delay}]] [[words:8]]`);
  if (!view) return;
  await run.send(`${run.tag} queued behind the plan [[words:3]]`);
  await waitFor(
    async () => view.toolResultsSeen().length > 0 || view.brokenAt !== undefined,
    (seen) => seen,
    15_000,
  );
  await run.send(`${run.tag} steer towards Rome`, 'steer');
}

/** Around a tool approval: while it waits, as it is decided, or in the reply it continues. */
async function playApproval(run: ScenarioRun, faultAt: number): Promise<void> {
  const phase = run.random.pick(['waiting', 'deciding', 'continuing'] as const);
  const words = run.random.int(30, 80);
  const delay = run.random.int(40, 80);
  // How long before the fault the decision is sent (none while it waits).
  const lead =
    phase === 'waiting'
      ? 0
      : phase === 'deciding'
        ? run.random.int(0, 40)
        : Math.round((words * delay * run.random.int(5, 95)) / 100);
  run.tell(
    phase === 'waiting'
      ? 'a tool call waiting for approval when the fault hits'
      : phase === 'deciding'
        ? `a tool call approved ${lead} ms before the fault`
        : `a tool call approved, its reply of ${words} words every ${delay} ms hit ${lead} ms in`,
  );
  // The request comes within a second or so of the send.
  await sleepUntil(faultAt - 2_500 - lead - run.random.int(0, 1_000));
  const view = await run.send(
    `${run.tag} note this [[tool:save_note]] [[words:${words}]] [[delay:${delay}]]`,
  );
  if (!view) return;
  await view.done;
  const pending = phase === 'waiting' ? undefined : await run.pendingApproval();
  if (!pending) return;
  await sleepUntil(faultAt - lead);
  // Not awaited: the decision may meet the fault.
  run.inFlight.push(run.approve(pending));
}
