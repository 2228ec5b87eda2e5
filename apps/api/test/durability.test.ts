import { type ErrorBody, refusalMessages, type Turn } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, textOfMessage, waitFor } from './support/client';
import { FaultLab, sleepUntil } from './support/faults/lab';
import { atRest, openChat, served } from './support/faults/labChat';
import { storedMessageIds } from './support/faults/labRows';
import { KILL_BOUND_MS } from './support/faults/losses';
import { StreamView } from './support/faults/streamView';

/**
 * The losses a database outage or a hard kill caused, one test each, against a real API process
 * on a PostgreSQL server of the test's own. What a person was told was accepted, and what they
 * saw of a reply (up to the bound on a hard kill), must be stored; no turn may say it is done
 * while its messages are missing. The fault suite (faults.test.ts) hunts for such losses at random
 * points; these pin the ones found.
 */
let lab: FaultLab;

beforeAll(async () => {
  lab = await FaultLab.open();
}, 120_000);

afterAll(async () => {
  await lab?.close();
});

interface TurnRow {
  id: string;
  status: string;
  user_message_id: string | null;
  assistant_message_id: string | null;
}

async function turnRow(turnId: string): Promise<TurnRow | undefined> {
  const [row] = await lab.postgres.query(
    (sql) => sql<TurnRow[]>`
      select id, status, user_message_id, assistant_message_id from chat_turn_requests where id = ${turnId}`,
  );
  return row;
}

/** A send, made again with its `clientRequestId` while the API answers a passing `503`. */
async function accepted(client: ApiClient, threadId: string, text: string): Promise<Response> {
  const clientRequestId = crypto.randomUUID();
  return await served(() => client.via(lab.baseUrl).send(threadId, text, clientRequestId));
}

/**
 * Whether a refusal says the database went away while its change was committing, so that whether
 * it landed is not known (the one refusal that may follow a recorded change).
 */
async function refusedUnsure(response: Response): Promise<boolean> {
  const body = (await response.json().catch(() => undefined)) as ErrorBody | undefined;
  return body?.error.message === refusalMessages.unavailable.unsure;
}

async function send(client: ApiClient, threadId: string, text: string): Promise<StreamView> {
  const response = await accepted(client, threadId, text);
  expect(response.status).toBe(200);
  return new StreamView(response.headers.get('x-turn-id') ?? '', response);
}

async function queue(client: ApiClient, threadId: string, text: string): Promise<Turn> {
  const response = await accepted(client, threadId, text);
  expect(response.status).toBe(202);
  return ((await response.json()) as { turn: Turn }).turn;
}

/** A reply of tool steps with a steer sent once its first result has shown. */
async function steeredAfterFirstResult(text: string, steerText: string) {
  const { client, threadId } = await openChat(lab);
  const view = await send(client, threadId, text);
  await waitFor(
    async () => view.toolResultsSeen().length,
    (results) => results >= 1,
    30_000,
  );
  const steer = await client.json<{ turn: { id: string; status: string } }>(
    'POST',
    `/api/threads/${threadId}/turns`,
    { clientRequestId: crypto.randomUUID(), text: steerText, mode: 'steer' },
  );
  expect(steer.body.turn.status).toBe('steer_pending');
  return { client, threadId, view, steerId: steer.body.turn.id };
}

/** Where a steer is once the thread is at rest: in the transcript (its message stored) or the queue. */
async function whereSteerIs(client: ApiClient, threadId: string, steerId: string, text: string) {
  const detail = await atRest(lab, client, threadId);
  const row = await turnRow(steerId);
  const messageId = row?.user_message_id;
  return {
    inTranscript: detail.messages.some(
      (message) => message.role === 'user' && textOfMessage(message) === text,
    ),
    inQueue: detail.turnQueue.items.some((item) => item.id === steerId),
    status: row?.status,
    stored: messageId ? (await storedMessageIds(lab, [messageId])).length === 1 : false,
  };
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

describe('what the person saw survives a database outage and a hard kill', () => {
  it('keeps the message and the whole reply of a turn whose reply ends during a 60 s outage, and never calls it completed without them', async () => {
    const { client, threadId } = await openChat(lab);
    const view = await send(client, threadId, 'long [[words:200]] [[delay:100]]');
    await waitFor(
      async () => view.wordCount,
      (words) => words >= 30,
      30_000,
    );
    // The reply goes on streaming from the API's memory, and ends while the database is away.
    await lab.inject('outage-60s');
    await view.done;
    expect(view.finish).toEqual({ at: expect.any(Number), interrupted: false });
    expect(view.wordCount).toBe(200);

    const detail = await atRest(lab, client, threadId);
    const row = await turnRow(view.turnId);
    expect(row?.status).toBe('completed');
    // A completed turn's messages are in memory, under the ids it names.
    expect(await storedMessageIds(lab, [row?.user_message_id, row?.assistant_message_id])).toEqual(
      [row?.user_message_id, row?.assistant_message_id].sort(),
    );
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(textOfMessage(detail.messages[0])).toBe('long [[words:200]] [[delay:100]]');
    expect(normalise(textOfMessage(detail.messages[1]))).toBe(normalise(view.textSeen().join('')));
  }, 240_000);

  it('keeps a steer delivered into a reply just before a hard kill: its message is stored, not only marked delivered', async () => {
    const { client, threadId, view, steerId } = await steeredAfterFirstResult(
      'plan a trip [[steps:6]] [[delay:1500]]',
      'and include Rome',
    );
    await waitFor(
      async () => view.boundaries.length,
      (boundaries) => boundaries >= 1,
      30_000,
    );
    // The person has seen the steer roll into the reply.
    await sleepUntil((view.boundaries[0]?.at ?? 0) + 700);
    await lab.inject('kill');

    const kept = await whereSteerIs(client, threadId, steerId, 'and include Rome');
    expect(kept).toEqual(
      kept.inQueue
        ? { inTranscript: false, inQueue: true, status: 'queued', stored: false }
        : { inTranscript: true, inQueue: false, status: 'delivered', stored: true },
    );
  }, 120_000);

  it('goes on with a reply whose step boundary meets an outage: the steer waits, the reply is not failed', async () => {
    const { client, threadId, view, steerId } = await steeredAfterFirstResult(
      'plan a week [[steps:3]] [[delay:1500]] [[words:6]]',
      'and keep Sunday free',
    );
    // The next boundary comes about 1.5 s after the first result: the database is away by then.
    await lab.inject('outage-5s');
    await view.done;
    expect({ errors: view.errors, finished: view.finish !== undefined }).toEqual({
      errors: [],
      finished: true,
    });
    // Taken in at a later boundary, or queued when the reply ended first: never lost.
    const kept = await whereSteerIs(client, threadId, steerId, 'and keep Sunday free');
    expect((await turnRow(view.turnId))?.status).toBe('completed');
    expect(kept).toEqual(
      kept.status === 'delivered'
        ? { inTranscript: true, inQueue: false, status: 'delivered', stored: true }
        : { inTranscript: false, inQueue: true, status: 'queued', stored: false },
    );
  }, 120_000);

  it('loses to a hard kill nothing a landed checkpoint holds: once the write after a chunk has landed, the chunk is kept', async () => {
    const { client, threadId } = await openChat(lab);
    const view = await send(client, threadId, 'a long story [[words:2000]] [[delay:40]]');
    await waitFor(
      async () => view.wordCount,
      (words) => words >= 20,
      30_000,
    );
    // A checkpoint write held in flight (the turn's row locked) while the reply streams on: what
    // streams meanwhile has reached the person and is in no landed write yet.
    await lab.postgres.query((sql) =>
      sql.begin(async (hold) => {
        await hold`select id from chat_turn_requests where id = ${view.turnId} for update`;
        await waitFor(
          () => checkpointWritesWaiting(),
          (count) => count > 0,
          30_000,
        );
        const before = view.wordCount;
        await waitFor(
          async () => view.wordCount,
          (words) => words >= before + 5,
          30_000,
        );
      }),
    );
    const seen = normalise(view.textSeen().join(''));
    // Released: the write in flight lands and the next one, with everything since, follows it as
    // soon as it is done (no timer's pace); once that one has landed, a kill must keep all of it.
    await waitFor(
      async () => normalise((await turnPartialText(view.turnId)) ?? ''),
      (stored) => stored.startsWith(seen),
      30_000,
    );
    await lab.inject('kill');

    const detail = await atRest(lab, client, threadId);
    const stored = normalise(textOfMessage(detail.messages[1]));
    expect(detail.messages[1]?.metadata.interrupted).toBe(true);
    expect(stored.startsWith(seen), `stored "…${stored.slice(-60)}", seen "…${seen.slice(-60)}"`).toBe(true);
    // And nothing that was not streamed.
    expect(normalise(view.textSeen().join('')).startsWith(stored)).toBe(true);
  }, 120_000);

  it('keeps the tool steps of a reply cut off by a hard kill', async () => {
    const { client, threadId } = await openChat(lab);
    const view = await send(client, threadId, 'check the time [[steps:4]] [[delay:1000]]');
    await waitFor(
      async () => view.toolResultsSeen().length,
      (results) => results >= 2,
      30_000,
    );
    // Well past the bound: both steps must be kept.
    await sleepUntil(Date.now() + 2 * KILL_BOUND_MS);
    const seen = view.toolResultsSeen();
    await lab.inject('kill');

    const detail = await atRest(lab, client, threadId);
    const row = await turnRow(view.turnId);
    expect(row?.status).toBe('interrupted');
    expect(row?.assistant_message_id).not.toBeNull();
    const storedCalls = detail.messages
      .filter((message) => message.role === 'assistant')
      .flatMap((message) => message.parts.map((part) => part.toolCallId));
    expect(storedCalls).toEqual(expect.arrayContaining(seen));
  }, 120_000);

  it('names the stored tool steps of a reply stopped before its first word as its interrupted reply', async () => {
    const { client, threadId } = await openChat(lab);
    const view = await send(client, threadId, 'check the time [[steps:4]] [[delay:1000]]');
    await waitFor(
      async () => view.toolResultsSeen().length,
      (results) => results >= 2,
      30_000,
    );
    const stop = await client.via(lab.baseUrl).json('POST', `/api/threads/${threadId}/interrupt`);
    expect(stop.status).toBe(200);
    await view.done;

    const detail = await atRest(lab, client, threadId);
    const row = await turnRow(view.turnId);
    expect(row?.status).toBe('interrupted');
    expect(row?.assistant_message_id).not.toBeNull();
    expect(await storedMessageIds(lab, [row?.assistant_message_id])).toEqual([row?.assistant_message_id]);
    const reply = detail.messages.find((message) => message.id === row?.assistant_message_id);
    expect(reply?.metadata.interrupted).toBe(true);
    expect(reply?.parts.map((part) => part.toolCallId)).toEqual(
      expect.arrayContaining(view.toolResultsSeen()),
    );
  }, 60_000);

  it('never answers a thread detail in which an accepted message is neither in the transcript nor in the queue, whatever settles between its reads', async () => {
    const { client, threadId } = await openChat(lab);
    const api = client.via(lab.baseUrl);
    // A turn a runner holds whose message memory does not hold yet: a run's own save comes at its
    // end, so this is every running turn, and what crash recovery finds after a kill. The runner
    // here is one that is gone (its lease runs an hour): nothing but this test moves the turn.
    const paused = await served(() =>
      api.fetch('PUT', `/api/threads/${threadId}/queue/paused`, { paused: true }),
    );
    expect(paused.status).toBe(200);
    const text = 'held by a runner that is gone';
    const turn = await queue(client, threadId, text);
    const userMessageId = crypto.randomUUID();
    const [place] = await lab.postgres.query(
      (sql) => sql<{ memory_thread_id: string; owner_id: string }[]>`
        update chat_turn_requests set status = 'running', runner_id = 'gone', user_message_id = ${userMessageId},
          started_at = now(), lease_expires_at = now() + interval '1 hour'
        where id = ${turn.id}
        returning (select memory_thread_id from branches where id = branch_id),
          (select owner_id from threads where id = thread_id)`,
    );
    expect((await api.detail(threadId)).turnQueue.activeTurn?.text).toBe(text);

    // A detail read meets the turn's settle between its reads: the settle makes its moves in the
    // order every settler does (the message into memory, then the final state, committed), while
    // the read waits on the turn rows. Held by a lock on them, so the interleaving is the same on
    // every run, whatever the machine's pace.
    const detail = await lab.postgres.query(async (sql) =>
      sql.begin(async (settle) => {
        await settle`lock table chat_turn_requests in access exclusive mode`;
        const reading = api.detail(threadId);
        const read = reading.then(
          (answer) => ({ answer }),
          (error: unknown) => ({ error }),
        );
        const waiting = await waitFor(
          () =>
            Promise.race([
              read.then(() => -1),
              lab.postgres.query(async (watch) => {
                const [row] = await watch<{ count: number }[]>`
                  select count(*)::int as count from pg_stat_activity
                  where wait_event_type = 'Lock' and pid <> pg_backend_pid()
                    and query ilike '%"chat_turn_requests"%'`;
                return row?.count ?? 0;
              }),
            ]),
          (count) => count !== 0,
          30_000,
        );
        expect(waiting, 'the detail read ended before it met the settle').toBeGreaterThan(0);
        const content = JSON.stringify({ format: 2, parts: [{ type: 'text', text }] });
        await settle`
          insert into mastra.mastra_messages (id, thread_id, content, "createdAt", "createdAtZ", role, type, "resourceId")
          values (${userMessageId}, ${place?.memory_thread_id ?? ''}, ${content}, now() at time zone 'UTC', now(), 'user', 'v2', ${place?.owner_id ?? ''})`;
        await settle`
          update chat_turn_requests set status = 'interrupted', finished_at = now(), lease_expires_at = null
          where id = ${turn.id}`;
        return { read };
      }),
    );
    const outcome = await detail.read;
    if ('error' in outcome) throw outcome.error;
    const { answer } = outcome;
    const inTranscript = answer.messages.some(
      (message) => message.role === 'user' && textOfMessage(message) === text,
    );
    const inQueue = [answer.turnQueue.activeTurn, ...answer.turnQueue.items].some(
      (item) => item?.id === turn.id,
    );
    expect({ inTranscript, inQueue }).not.toEqual({ inTranscript: false, inQueue: false });
    // And once settled, the transcript holds it (the settle above is one a reader can see).
    const after = await api.detail(threadId);
    expect(after.messages.map(textOfMessage)).toEqual([text]);
    expect(after.turnQueue.activeTurn).toBeNull();
  }, 60_000);

  it('answers a turn whose run starts as the database goes away: it waits for the database instead of failing', async () => {
    const { client, threadId } = await openChat(lab);
    // Held at its first read of what the model gets (the branch's context markers) by a lock of
    // the test's, so the outage meets every run at the same point.
    let locked = () => {};
    const taken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const held = lab.postgres.query(async (sql) =>
      sql
        .begin(async (lock) => {
          await lock`lock table context_markers in access exclusive mode`;
          locked();
          await new Promise((resolve) => setTimeout(resolve, 60_000));
        })
        .catch(() => undefined),
    );
    await taken;
    // The reply's headers go with its first chunk, after that read: the send is answered later.
    const sending = send(client, threadId, 'started in an outage [[words:8]]');
    const waiting = await waitFor(
      () =>
        lab.postgres.query(async (watch) => {
          const [row] = await watch<{ count: number }[]>`
            select count(*)::int as count from pg_stat_activity
            where wait_event_type = 'Lock' and pid <> pg_backend_pid() and query ilike '%"context_markers"%'`;
          return row?.count ?? 0;
        }),
      (count) => count > 0,
      30_000,
    );
    expect(waiting, "the run never read the branch's context").toBeGreaterThan(0);
    await lab.inject('outage-5s');
    await held;
    const view = await sending;
    await view.done;
    expect({ errors: view.errors, finished: view.finish !== undefined }).toEqual({
      errors: [],
      finished: true,
    });
    expect(normalise(view.textSeen().join(' '))).not.toBe('');
    const detail = await atRest(lab, client, threadId);
    expect((await turnRow(view.turnId))?.status).toBe('completed');
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  }, 120_000);

  it('names the stored reply on a turn that completed after a tool approval', async () => {
    const { client, threadId } = await openChat(lab);
    const asked = await send(client, threadId, 'note this [[tool:save_note]] [[words:12]]');
    await asked.done;
    const [request] = (await client.via(lab.baseUrl).detail(threadId)).hitl;
    const approved = await client
      .via(lab.baseUrl)
      .fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, {
        decision: 'approve',
      });
    expect(approved.status).toBe(200);
    await new StreamView(asked.turnId, approved).done;

    await atRest(lab, client, threadId);
    const row = await turnRow(asked.turnId);
    expect(row?.status).toBe('completed');
    expect(await storedMessageIds(lab, [row?.user_message_id, row?.assistant_message_id])).toEqual(
      [row?.user_message_id, row?.assistant_message_id].sort(),
    );
  }, 60_000);

  it('never refuses an approval it has recorded: a database that stops just after the decision changes nothing of the answer', async () => {
    // The decision commits within a few milliseconds of arriving; the outage is aimed just after.
    for (const afterMs of [10, 20, 35]) {
      await lab.serving();
      const { client, threadId } = await openChat(lab);
      const asked = await send(client, threadId, 'note this [[tool:save_note]] [[words:12]]');
      await asked.done;
      // The request is recorded as the run suspends, which may come just after its stream ends.
      const [request] =
        (
          await waitFor(
            () =>
              client
                .via(lab.baseUrl)
                .detail(threadId)
                .catch(() => undefined),
            (read) => read?.hitl.some((pending) => pending.status === 'pending') === true,
            30_000,
          )
        )?.hitl ?? [];
      if (!request) {
        const row = await turnRow(asked.turnId);
        throw new Error(
          `the approval request was never recorded: the stream ${JSON.stringify({ approvalRequested: asked.approvalRequested, errors: asked.errors, broken: asked.brokenAt !== undefined })}, the turn ${row?.status}`,
        );
      }
      const deciding = client
        .via(lab.baseUrl)
        .fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, { decision: 'approve' });
      await sleepUntil(Date.now() + afterMs);
      const outage = lab.inject('outage-5s');
      const answer = await deciding;
      const reply = answer.status === 200 ? new StreamView(asked.turnId, answer) : undefined;
      const unsure = !reply && (await refusedUnsure(answer));
      await outage;

      const [decided] = await lab.postgres.query(
        (sql) => sql<{ status: string }[]>`select status from hitl_requests where id = ${request?.id ?? ''}`,
      );
      // An answer of 200 means it was recorded; a refusal means nothing changed, unless it says
      // the database stopped during the commit itself (its acknowledgment may be what was lost).
      expect({ afterMs, answer: answer.status, request: decided?.status }).toEqual({
        afterMs,
        answer: answer.status,
        request: answer.status === 200 ? 'approved' : unsure ? decided?.status : 'pending',
      });
      if (reply) {
        // The continued reply runs to an end, whatever the outage did to it.
        await reply.done;
        await atRest(lab, client, threadId);
      } else if (!unsure) expect((await turnRow(asked.turnId))?.status).toBe('awaiting_approval');
    }
  }, 240_000);

  it('never refuses a claim of the queue head it has recorded: a database that stops just after the claim changes nothing of the answer', async () => {
    // The claim commits within a few milliseconds of arriving; the outage is aimed just after.
    for (const afterMs of [5, 10, 15, 20, 30]) {
      await lab.serving();
      const { client, threadId } = await openChat(lab);
      // A thread at rest with one turn waiting: the first reply is stopped (which pauses the queue,
      // S3) and the queue goes on; nothing claims a queued turn but a viewer, so the head waits.
      const first = await send(client, threadId, 'first [[words:400]] [[delay:30]]');
      const head = await queue(client, threadId, 'next [[words:12]]');
      const api = client.via(lab.baseUrl);
      expect((await served(() => api.fetch('POST', `/api/threads/${threadId}/interrupt`))).status).toBe(200);
      await first.done;
      const resumed = await served(() =>
        api.fetch('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false }),
      );
      expect(resumed.status).toBe(200);
      await atRest(lab, client, threadId);
      const claiming = client.via(lab.baseUrl).fetch('POST', `/api/threads/${threadId}/queue/claim`);
      await sleepUntil(Date.now() + afterMs);
      const outage = lab.inject('outage-5s');
      const answer = await claiming;
      const reply = answer.status === 200 ? new StreamView(head.id, answer) : undefined;
      const unsure = !reply && (await refusedUnsure(answer));
      await outage;

      // An answer of 200 means the head was claimed; a refusal means it still waits, as it was,
      // unless it says the database stopped during the commit itself.
      const claimed = (await turnRow(head.id))?.status !== 'queued';
      expect({ afterMs, answer: answer.status, claimed }).toEqual({
        afterMs,
        answer: answer.status,
        claimed: answer.status === 200 || (unsure && claimed),
      });
      if (reply) {
        // The claimed reply runs to an end, whatever the outage did to it.
        await reply.done;
        await atRest(lab, client, threadId);
      }
    }
  }, 240_000);
});

/** The checkpointed text of a running turn (undefined once it has none). */
async function turnPartialText(turnId: string): Promise<string | undefined> {
  const [row] = await lab.postgres.query(
    (sql) =>
      sql<{ partial_text: string }[]>`select partial_text from chat_turn_requests where id = ${turnId}`,
  );
  return row?.partial_text;
}

/** Checkpoint writes of the API waiting on a lock of a turn's row. */
async function checkpointWritesWaiting(): Promise<number> {
  const [row] = await lab.postgres.query(
    (sql) => sql<{ count: number }[]>`
      select count(*)::int as count from pg_stat_activity
      where wait_event_type = 'Lock' and query ilike 'update "chat_turn_requests"%'`,
  );
  return row?.count ?? 0;
}
