import type { DatabaseFreezer } from '../database';
import { describeError } from '../errors';
import type { Session } from '../http';
import { onProcesses } from '../processes';
import type { Row } from '../rows';
import { summarize } from '../stats';
import type { BenchContext } from './context';

/**
 * Issue 43: a database that hangs is a database that is away. The embedded PostgreSQL is frozen
 * (SIGSTOP) while a reply streams and sends, reads and a Stop keep coming; every answer is timed
 * (target: each within 2 s), then it goes on (SIGCONT) and every send the API accepted must have
 * run to its reply, and the reply that streamed through the freeze must be kept.
 */

/** The pace of the reply that streams through the freeze: it ends some seconds after the thaw. */
const WORD_MS = 20;
/** How long before the thaw the last round starts: each request has this long to be answered frozen. */
const LAST_ROUND_BEFORE_THAW_MS = 2_500;
const TARGET_MS = 2_000;

interface Answer {
  name: string;
  /** From the request to its answer's status line (for a stream) or its whole body; NaN: none. */
  ms: number;
  status: number;
  /** When it was answered (performance.now()): after the thaw, it waited for the database. */
  at: number;
  error?: string;
  /** A send that was accepted: its thread, the text it sent, and how it went on. */
  accepted?: { threadId: string; text: string; streamed?: Promise<boolean> };
}

interface Reply {
  words: number;
  finished: boolean;
  error?: string;
}

/** Reads an SSE reply to its end: how many words it brought and whether it ended with `finish`. */
async function readReply(response: Response): Promise<Reply> {
  let text = '';
  let finished = false;
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const bytes of response.body ?? []) {
      buffer += decoder.decode(bytes, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        if (!event.startsWith('data: {')) continue;
        const chunk = JSON.parse(event.slice(6)) as { type: string; delta?: string };
        if (chunk.type === 'text-delta') text += chunk.delta ?? '';
        if (chunk.type === 'finish') finished = true;
      }
    }
    return { words: wordCount(text), finished };
  } catch (error) {
    return { words: wordCount(text), finished, error: describeError(error) };
  }
}

const wordCount = (text: string) => text.trim().split(/\s+/).filter(Boolean).length;

interface Detail {
  messages: Array<{
    role: string;
    parts: Array<{ type: string; text?: string }>;
    metadata?: { failed?: boolean; interrupted?: boolean };
  }>;
  turnQueue: { activeTurn: { id: string } | null; items: Array<{ id: string }> };
}

const textOf = (message: Detail['messages'][number] | undefined) =>
  (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text ?? ''] : [])).join('');

/** What became of a send: its message in the thread, followed by a reply that completed. */
function outcomeOf(
  detail: Detail,
  text: string,
): 'completed' | 'failed' | 'interrupted' | 'no reply' | 'missing' {
  const index = detail.messages.findIndex((message) => message.role === 'user' && textOf(message) === text);
  if (index < 0) return 'missing';
  const reply = detail.messages[index + 1];
  if (reply?.role !== 'assistant') return 'no reply';
  if (reply.metadata?.failed) return 'failed';
  if (reply.metadata?.interrupted) return 'interrupted';
  return 'completed';
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function measureFrozenDatabase(context: BenchContext, freezer: DatabaseFreezer): Promise<Row[]> {
  const { mode, session } = context;
  const freezeMs = mode.freezeSeconds * 1_000;
  const abortAfterMs = freezeMs + 30_000;
  const rounds = Math.max(1, Math.ceil((freezeMs - LAST_ROUND_BEFORE_THAW_MS) / 1_000));
  context.log(`frozen: preparing (${rounds} rounds of requests through a ${mode.freezeSeconds} s freeze)`);
  // Sends on idle chats start at once when accepted (200); sends on the streaming chat queue (202).
  const idle: string[] = [];
  for (let index = 0; index < rounds + 2; index++) idle.push(await session.createThread());
  const streaming = await session.createThread();
  const stopped = await session.createThread();
  const words = Math.ceil((freezeMs + (mode.quick ? 3_000 : 10_000)) / WORD_MS);
  const running = await session.send(streaming, `Through a freeze. [[words:${words}]] [[delay:${WORD_MS}]]`);
  if (running.status !== 200)
    throw new Error(`the streaming reply: ${running.status} ${await running.text()}`);
  const reply = readReply(running);
  const toStop = await session.send(stopped, 'A slow one to stop. [[words:2000]] [[delay:50]]');
  const toStopRead = readReply(toStop);
  // Mid-reply: the words are flowing before anything freezes.
  await sleep(1_000);

  let sent = 0;
  const timed = async (
    name: string,
    request: (signal: AbortSignal) => Promise<Response>,
    accept?: { threadId: string; text: string },
  ): Promise<Answer> => {
    const startedAt = performance.now();
    try {
      const response = await request(AbortSignal.timeout(abortAfterMs));
      if (
        response.status === 200 &&
        accept &&
        response.headers.get('content-type')?.includes('event-stream')
      ) {
        const at = performance.now();
        const streamed = readReply(response).then((read) => read.finished);
        return { name, ms: at - startedAt, status: 200, at, accepted: { ...accept, streamed } };
      }
      await response.arrayBuffer();
      const at = performance.now();
      const accepted = accept && (response.status === 200 || response.status === 202) ? accept : undefined;
      return { name, ms: at - startedAt, status: response.status, at, accepted };
    } catch (error) {
      return { name, ms: Number.NaN, status: 0, at: performance.now(), error: describeError(error) };
    }
  };
  const send = (threadId: string, kind: string) => {
    const text = `Frozen ${kind} ${++sent}. [[words:3]] [[delay:0]]`;
    return timed(
      kind,
      (signal) =>
        session.fetch(
          'POST',
          `/api/threads/${threadId}/turns`,
          { clientRequestId: crypto.randomUUID(), text },
          signal,
        ),
      { threadId, text },
    );
  };
  const get = (name: string, path: string) =>
    timed(name, (signal) => session.fetch('GET', path, undefined, signal));
  const round = (index: number) => [
    send(idle[index + 2] as string, 'send'),
    send(streaming, 'queued send'),
    get('thread read', `/api/threads/${streaming}`),
    get('thread list', '/api/threads'),
    get('session', '/api/auth/get-session'),
    timed('Stop', (signal) => session.fetch('POST', `/api/threads/${stopped}/interrupt`, undefined, signal)),
  ];

  context.log(`frozen: freezing PostgreSQL for ${mode.freezeSeconds} s`);
  // Mid-send: these are on their way (some inside their transaction, some answered) when the
  // database stops.
  const answers: Array<Promise<Answer>> = [send(idle[0] as string, 'send'), send(streaming, 'queued send')];
  await sleep(20);
  answers.push(send(idle[1] as string, 'send'), send(streaming, 'queued send'));
  await sleep(5);
  freezer.freeze();
  const frozenAt = performance.now();
  let thawedAt = Number.POSITIVE_INFINITY;
  try {
    for (let index = 0; index < rounds; index++) {
      answers.push(...round(index));
      await sleep(frozenAt + (index + 1) * 1_000 - performance.now());
    }
    await sleep(frozenAt + freezeMs - performance.now());
  } finally {
    freezer.thaw();
    thawedAt = performance.now();
  }
  context.log('frozen: thawed; waiting for every answer and turn');
  const answered = await Promise.all(answers);

  // Back: ready, the reply ends, and every accepted send ran to its reply.
  await until(
    async () => (await fetch(`${context.api.baseUrl}/api/ready`)).status,
    (status) => status === 200,
    60_000,
  );
  const through = await Promise.race([
    reply,
    sleep(120_000).then(
      (): Reply => ({ words: 0, finished: false, error: 'did not end within 120 s of the thaw' }),
    ),
  ]);
  // The slow reply ends now if no Stop got through during the freeze.
  await until(
    async () => {
      const response = await session.fetch('POST', `/api/threads/${stopped}/interrupt`);
      await response.arrayBuffer();
      return response.status;
    },
    (status) => status === 200,
    30_000,
  ).catch(() => {});
  await toStopRead;
  const accepted = answered.flatMap((answer) => (answer.accepted ? [answer.accepted] : []));
  await Promise.all(accepted.map((send) => send.streamed));
  // The queued ones wait for a viewer (the chat's default drain): the harness claims them in turn.
  await drainQueue(session, streaming);
  const outcomes = new Map<string, number>();
  let lost = 0;
  for (const send of accepted) {
    const detail = await session.json<Detail>('GET', `/api/threads/${send.threadId}`);
    const outcome = outcomeOf(detail, send.text);
    if (outcome !== 'completed') lost++;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  const streamedDetail = await session.json<Detail>('GET', `/api/threads/${streaming}`);
  const storedReply = streamedDetail.messages.find((message) => message.role === 'assistant');
  const storedWords = wordCount(textOf(storedReply));
  const replyKept = through.finished && through.words === words && storedWords === words;
  if (!replyKept) lost++;

  const times = answered.map((answer) => answer.ms).filter(Number.isFinite);
  const summary = summarize(times);
  const waitedForThaw = answered.filter((answer) => answer.at > thawedAt).length;
  const failed = answered.filter((answer) => answer.status === 0);
  const statuses = new Map<string, number>();
  for (const answer of answered) {
    const key = `${answer.status === 0 ? 'no answer' : answer.status} (${answer.name})`;
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
  }
  const replyText = replyKept
    ? `ended whole (${words} words, all stored)`
    : `${through.finished ? 'finished' : `did not finish${through.error ? ` (${through.error.slice(0, 80)})` : ''}`}, ${through.words} of ${words} words read, ${storedWords} stored${storedReply?.metadata?.interrupted ? ', marked interrupted' : ''}${storedReply?.metadata?.failed ? ', marked failed' : ''}`;
  return [
    {
      id: 'frozen-answer',
      figure: `every request's answer while PostgreSQL is frozen (SIGSTOP) for ${mode.freezeSeconds} s mid-reply and mid-send (${onProcesses(context.api)}): sends, queued sends, reads, lists, sessions, Stop`,
      unit: 'ms',
      app: summary,
      ratio: `max ${summary.max.toFixed(0)} ms`,
      target: 'every answer <= 2 s (max)',
      met: mode.quick ? undefined : failed.length === 0 && summary.max <= TARGET_MS,
      note: `${[...statuses].map(([key, count]) => `${count}x ${key}`).join(', ')}; answered only after the thaw: ${waitedForThaw}${failed.length > 0 ? `; no answer at all: ${failed.length} (${failed[0]?.error?.slice(0, 80)})` : ''}`,
    },
    {
      id: 'frozen-lost',
      figure:
        'after the thaw (SIGCONT): accepted sends whose turn did not complete, and the streaming reply if it was not kept whole',
      unit: 'count',
      app: lost,
      target: '0',
      met: mode.quick ? undefined : lost === 0,
      note: `${accepted.length} sends accepted during the freeze (${[...outcomes].map(([outcome, count]) => `${count} ${outcome}`).join(', ') || 'none'}); the reply streaming through it ${replyText}`,
    },
  ];
}

/** Claims the queue's head until the queue is empty (each claimed turn read to its end). */
async function drainQueue(session: Session, threadId: string): Promise<void> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const detail = await session.json<Detail>('GET', `/api/threads/${threadId}`).catch(() => undefined);
    if (detail && detail.turnQueue.items.length === 0 && detail.turnQueue.activeTurn === null) return;
    if (detail && detail.turnQueue.activeTurn === null) {
      const claimed = await session.fetch('POST', `/api/threads/${threadId}/queue/claim`);
      if (claimed.status === 200) {
        await readReply(claimed);
        continue;
      }
      await claimed.arrayBuffer();
    }
    await sleep(500);
  }
}

/** The rows when the scenario cannot run here, saying why. */
export function frozenNotRun(reason: string): Row[] {
  return [
    {
      id: 'frozen-answer',
      figure: "every request's answer while PostgreSQL is frozen",
      unit: 'ms',
      notRun: reason,
    },
    { id: 'frozen-lost', figure: 'accepted sends lost to the freeze', unit: 'count', notRun: reason },
  ];
}
