import type { ErrorBody, Turn } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, startApiProcess } from './support/apiProcess';
import { ApiClient, iterateChunks, textOfMessage, waitFor } from './support/client';
import { sleepUntil } from './support/faults/lab';
import { OwnedPostgres } from './support/faults/ownedPostgres';

/**
 * A database that hangs (stopped with `SIGSTOP`, postmaster and sessions alike: connections stay
 * open, nothing answers) is a database that is away: every request is answered within the bound,
 * and nothing accepted is lost once it goes on (`SIGCONT`).
 *
 * Profiles: a 20 s freeze inside `pnpm test`, 40 s in `pnpm faults` (`FAULT_PROFILE=full`).
 */
const full = process.env.FAULT_PROFILE === 'full';
const FREEZE_MS = full ? 40_000 : 20_000;

/**
 * How long a request may take while the database is frozen. The target is 2 s (a statement that
 * gets no answer for a second is checked against the database's liveness, which takes at most
 * another); the bound is looser because a loaded machine adds its own delays. Without a client-side
 * deadline a request holding a connection waits out the whole freeze.
 */
const ANSWER_BOUND_MS = 5_000;

/** The model's pause between two words: the reply streams through the freeze and ends after it. */
const WORD_MS = 20;

let server: OwnedPostgres | undefined;
let api: ApiProcess | undefined;

beforeAll(async () => {
  server = await OwnedPostgres.start();
  api = await startApiProcess({
    DATABASE_URL: server.databaseUrl,
    TURN_LEASE_MS: '1500',
    LOCAL_MODEL_DELAY_MS: String(WORD_MS),
    // The freeze's warnings (each request that met it) are expected; API_TEST_LOG shows them.
    LOG_LEVEL: process.env.API_TEST_LOG ?? 'error',
  });
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await server?.dispose();
});

interface Answer {
  name: string;
  ms: number;
  status: number;
  code: string | null;
  /** A send answered `202`: the turn it queued. */
  turn?: Turn;
}

/** One request, timed; never waits longer than the freeze and then some (a hang is an answer of 0). */
async function timed(name: string, request: (signal: AbortSignal) => Promise<Response>): Promise<Answer> {
  const startedAt = Date.now();
  const response = await request(AbortSignal.timeout(FREEZE_MS + 30_000)).catch(() => undefined);
  const text = response ? await response.text().catch(() => '') : '';
  const ms = Date.now() - startedAt;
  const body = parsed(text);
  return {
    name,
    ms,
    status: response?.status ?? 0,
    code: (body as Partial<ErrorBody> | undefined)?.error?.code ?? null,
    turn: response?.status === 202 ? (body as { turn: Turn }).turn : undefined,
  };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

describe('a database that hangs', () => {
  it(`answers every request within ${ANSWER_BOUND_MS / 1000} s through a ${FREEZE_MS / 1000} s freeze mid-reply and mid-send, and keeps the reply whole and every accepted send once it goes on`, async () => {
    if (!api || !server) throw new Error('not started');
    const client = await ApiClient.signIn(api.baseUrl);
    const threadId = await client.createThread('Through a freeze');
    // Streams for the freeze and some 10 s more.
    const words = Math.ceil((FREEZE_MS + 10_000) / WORD_MS);
    const running = await client.send(threadId, `a long reply [[words:${words}]]`);
    expect(running.status).toBe(200);
    let seen = '';
    let finished = false;
    let broke: unknown;
    const reading = (async () => {
      for await (const chunk of iterateChunks(running)) {
        if (chunk.type === 'text-delta') seen += String(chunk.delta);
        if (chunk.type === 'finish') finished = true;
      }
    })().catch((error: unknown) => {
      broke = error;
    });
    await waitFor(
      async () => seen,
      (text) => text.trim().split(/\s+/).length >= 20,
      30_000,
    );

    const send = (name: string) =>
      timed(name, (signal) =>
        client.fetch(
          'POST',
          `/api/threads/${threadId}/turns`,
          { clientRequestId: crypto.randomUUID(), text: `${name} [[words:3]]` },
          { signal },
        ),
      );
    const round = (index: number) => [
      send(`send ${index}`),
      timed(`detail ${index}`, (signal) =>
        client.fetch('GET', `/api/threads/${threadId}`, undefined, { signal }),
      ),
      timed(`list ${index}`, (signal) => client.fetch('GET', '/api/threads', undefined, { signal })),
      timed(`session ${index}`, (signal) =>
        client.fetch('GET', '/api/auth/get-session', undefined, { signal }),
      ),
    ];

    // Mid-send: these are on their way (some already in a transaction) when the database stops.
    const answers: Promise<Answer>[] = [send('send at the freeze a'), send('send at the freeze b')];
    server.freeze();
    const frozenAt = Date.now();
    // Rounds through the freeze: the first meets connections the pool holds, later ones the
    // circuit (or connections that were dropped and are being made again).
    for (let index = 0; Date.now() < frozenAt + FREEZE_MS - 3_000; index++) {
      answers.push(...round(index));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    await sleepUntil(frozenAt + FREEZE_MS);
    server.thaw();
    const answered = await Promise.all(answers);

    const slow = answered
      .filter((answer) => answer.ms >= ANSWER_BOUND_MS)
      .map(({ name, ms }) => ({ name, ms }));
    expect(slow, 'requests that waited on the frozen database').toEqual([]);
    const wrong = answered.filter(
      (answer) =>
        !(answer.status === 503 && answer.code === 'unavailable') &&
        !(answer.status === 202 && answer.name.startsWith('send')) &&
        !(answer.status === 200 && !answer.name.startsWith('send')),
    );
    expect(wrong, 'answers other than the outage refusal or a success').toEqual([]);
    expect(answered.some((answer) => answer.status === 503)).toBe(true);

    // Back: ready means ready (the very next read is served, not refused until the circuit's next
    // probe), the reply ends whole, and every send that was accepted is queued.
    await waitFor(
      async () => (await fetch(`${api?.baseUrl}/api/ready`)).status,
      (status) => status === 200,
      60_000,
    );
    expect((await client.fetch('GET', `/api/threads/${threadId}`)).status).toBe(200);
    await Promise.race([
      reading,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the reply did not end')), 120_000)),
    ]);
    expect(broke).toBeUndefined();
    expect(finished).toBe(true);
    expect(seen.trim().split(/\s+/)).toHaveLength(words);
    const detail = await waitFor(
      () => client.detail(threadId).catch(() => undefined),
      (read) => read !== undefined && read.turnQueue.activeTurn === null,
      60_000,
    );
    if (!detail) throw new Error('unreadable');
    const reply = detail.messages.filter((message) => message.role === 'assistant').at(-1);
    expect(textOfMessage(reply)).toBe(seen);
    const accepted = answered.flatMap((answer) => (answer.turn ? [answer.turn.id] : []));
    const queued = detail.turnQueue.items.map((item) => item.id);
    expect(accepted.filter((id) => !queued.includes(id))).toEqual([]);
  }, 300_000);
});
