import { randomUUID } from 'node:crypto';
import type { Turn } from '@chat/contracts';
import { findTurn } from '../src/chats/turns/repository';
import type { TurnStream } from '../src/chats/turns/stream/turnStream';
import { turnStreamResponse } from '../src/platform/http';
import { type EvalCase, FOLLOW_UP } from './cases';
import type { EvalEnvironment } from './environment';
import type { RecordedCall } from './recordingModel';
import { readShareSnapshot, type ShareSnapshot } from './share';
import { collectEvents, ReplyReader } from './sse';

/** A turn that started, and its reply as the SSE response the browser gets. */
interface StartedTurn {
  turnId: string;
  response: Response;
}

const replyOf = ({ turn, stream }: { turn: Turn; stream: TurnStream }): StartedTurn => ({
  turnId: turn.id,
  response: turnStreamResponse(turn.id, stream),
});

/**
 * How the queued message comes to run after the reply is cut off: the calls a tab makes. Adding a
 * mode to the profile is one entry in `profileModes` (profile.ts).
 */
export const interruptModes = {
  /** Stop & send on the head while the reply streams. */
  'stop-and-send': async (env: EvalEnvironment, threadId: string, headId: string) =>
    replyOf(await env.runtime.services.interrupts.sendNow(env.ownerId, threadId, headId)),
  /** A plain Stop (which pauses the queue, S3), then Send now on the head. */
  'stop-then-send-now': async (env: EvalEnvironment, threadId: string, headId: string) => {
    const { interrupts } = env.runtime.services;
    await interrupts.stop(env.ownerId, threadId);
    return replyOf(await interrupts.sendNow(env.ownerId, threadId, headId));
  },
  /**
   * A plain Stop (which pauses the queue, S3), Resume, then a viewer's claim of the head, through
   * its route (`POST /queue/claim`).
   */
  'stop-then-viewer-claim': async (env: EvalEnvironment, threadId: string) => {
    const { interrupts, queue } = env.runtime.services;
    await interrupts.stop(env.ownerId, threadId);
    await queue.setPaused(env.ownerId, threadId, false);
    const response = await env.app.request(`/api/threads/${threadId}/queue/claim`, {
      method: 'POST',
      headers: env.headers,
    });
    const turnId = response.headers.get('x-turn-id');
    if (response.status !== 200 || !turnId) {
      throw new Error(`the viewer claim answered ${response.status}: ${await response.text()}`);
    }
    return { turnId, response };
  },
} satisfies Record<string, (env: EvalEnvironment, threadId: string, headId: string) => Promise<StartedTurn>>;
export type InterruptMode = keyof typeof interruptModes;

export interface CaseInput extends EvalCase {
  mode: InterruptMode;
}

/** Everything a case leaves behind that the scorers read. */
export interface CaseObservation {
  localModel: boolean;
  /** Why the case could not be driven to the end, if it could not. */
  error?: string;
  calls: { interrupted: RecordedCall[]; claimed: RecordedCall[]; followUp: RecordedCall[] };
  interrupted: { status: string; visibleText: string };
  /** The queued message as the server stored it. */
  queuedText: string;
  claimed: { status: string; handoff: boolean; reply: string };
  followUpReply: string;
  /** The thread detail marks the interrupted reply as interrupted (what the person sees). */
  detailMarksInterrupted: boolean;
  /** Each place a person (or their browser) can read, as text. */
  surfaces: { memory: string; threadDetail: string; replyStreams: string; threadEvents: string };
  share: ShareSnapshot;
}

/** Local-model directives: a slow, long first reply; short, quick later ones. No effect elsewhere. */
const directives = {
  interrupted: ' [[words:600]] [[delay:8]]',
  claimed: ' [[words:24]] [[delay:1]]',
  followUp: ' [[words:8]] [[delay:1]]',
};

/**
 * Drives one case through the API's services: a slow reply streams, the queued message is sent,
 * the reply is interrupted (`input.mode`), the queued message runs, then one more ordinary turn.
 */
export async function runCase(env: EvalEnvironment, input: CaseInput): Promise<CaseObservation> {
  const { services } = env.runtime;
  const owner = env.ownerId;
  const step = (name: string) => `${input.id}/${input.mode}/${name}`;
  const withDirectives = (text: string, which: keyof typeof directives) =>
    env.localModel ? `${text}${directives[which]}` : text;
  const send = (threadId: string, text: string) =>
    services.acceptance.send(owner, threadId, { clientRequestId: randomUUID(), text });

  const thread = await services.threads.create(owner, {});
  const eventsAbort = new AbortController();
  const events = collectEvents(await services.events.open(owner, thread.id, eventsAbort.signal), eventsAbort);

  env.recorder.step = step('interrupted');
  const first = await send(thread.id, withDirectives(input.request, 'interrupted'));
  if (first.kind !== 'streaming') throw new Error(`the first send was ${first.kind}, not started`);
  const firstReply = new ReplyReader(replyOf(first).response);
  await firstReply.untilWords(input.interruptAfterWords);

  const queued = await send(thread.id, withDirectives(input.queued, 'claimed'));
  if (queued.kind !== 'queued') throw new Error(`the queued send was ${queued.kind}, not queued`);
  env.recorder.step = step('claimed');
  const claimed = await interruptModes[input.mode](env, thread.id, queued.turn.id);
  const claimedReply = new ReplyReader(claimed.response);
  await Promise.all([firstReply.done, claimedReply.done]);

  env.recorder.step = step('follow-up');
  const next = await send(thread.id, withDirectives(FOLLOW_UP, 'followUp'));
  if (next.kind !== 'streaming') throw new Error(`the follow-up send was ${next.kind}, not started`);
  const nextReply = new ReplyReader(replyOf(next).response);
  await nextReply.done;

  const { db, sql } = env.runtime.database;
  const detail = await services.threads.detail(owner, thread.id);
  const interruptedRow = await findTurn(db, thread.id, first.turn.id);
  const claimedRow = await findTurn(db, thread.id, claimed.turnId);
  const memoryThreadId = detail.thread.activeBranchId;
  const recalled = await env.runtime.transcript.recall(memoryThreadId);
  const rawRows = await sql`
    select content from mastra.mastra_messages where thread_id = ${memoryThreadId}`;
  const interruptedMessage = detail.messages.find(
    (message) =>
      message.role === 'assistant' &&
      message.metadata.interrupted === true &&
      message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('') === firstReply.text,
  );
  // Thread events are built from the database asynchronously: give the last ones time to arrive.
  await new Promise((resolve) => setTimeout(resolve, 100));

  return {
    localModel: env.localModel,
    calls: {
      interrupted: env.recorder.callsOf(step('interrupted')),
      claimed: env.recorder.callsOf(step('claimed')),
      followUp: env.recorder.callsOf(step('follow-up')),
    },
    interrupted: { status: interruptedRow?.status ?? 'missing', visibleText: firstReply.text },
    queuedText: queued.turn.text,
    claimed: {
      status: claimedRow?.status ?? 'missing',
      handoff: claimedRow?.handoff ?? false,
      reply: claimedReply.text,
    },
    followUpReply: nextReply.text,
    detailMarksInterrupted: interruptedMessage !== undefined,
    surfaces: {
      memory: JSON.stringify({ recalled, rawRows }),
      threadDetail: JSON.stringify(detail),
      // The raw bytes, and the texts they spell (a reply streams word by word, split over chunks).
      replyStreams: [firstReply, claimedReply, nextReply]
        .map((reply) => `${reply.raw}\n${reply.text}`)
        .join('\n'),
      threadEvents: await events.stop(),
    },
    share: await readShareSnapshot(env, thread.id),
  };
}
