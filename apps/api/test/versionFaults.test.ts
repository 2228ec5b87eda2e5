import { type ErrorBody, refusalMessages, type ThreadDetail } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, textOfMessage, waitFor } from './support/client';
import { type Fault, FaultLab, sleepUntil } from './support/faults/lab';
import { atRest, openChat, served } from './support/faults/labChat';
import { lockWaiters } from './support/faults/labRows';
import { findLosses } from './support/faults/losses';
import { StreamView } from './support/faults/streamView';

/**
 * Versions (B1, regenerate) under a database outage or a hard kill, against a real API process on
 * a PostgreSQL server of the test's own. An edit into a new version or a regenerate that was
 * accepted must leave the new version holding the edited message and its reply (up to the kill
 * bound behind what streamed), the old version untouched, and the turn ended; one that was refused
 * must have changed nothing (unless the refusal says the commit itself met the outage).
 */
let lab: FaultLab;

beforeAll(async () => {
  lab = await FaultLab.open();
}, 120_000);

afterAll(async () => {
  await lab?.close();
});

/** A send of the setup, read to its end. */
async function exchange(client: ApiClient, threadId: string, text: string): Promise<void> {
  const clientRequestId = crypto.randomUUID();
  const response = await served(() => client.via(lab.baseUrl).send(threadId, text, clientRequestId));
  expect(response.status).toBe(200);
  await new StreamView(response.headers.get('x-turn-id') ?? '', response).done;
  await atRest(lab, client, threadId);
}

function editRequest(
  client: ApiClient,
  threadId: string,
  messageId: string,
  text: string,
  clientRequestId: string,
) {
  return client
    .via(lab.baseUrl)
    .fetch('POST', `/api/threads/${threadId}/messages/${messageId}/versions`, { clientRequestId, text });
}

function regenerateRequest(client: ApiClient, threadId: string, replyId: string, clientRequestId: string) {
  return client
    .via(lab.baseUrl)
    .fetch('POST', `/api/threads/${threadId}/messages/${replyId}/regenerate`, { clientRequestId });
}

/** What the thread was before the version change: its shown version, and the message edited. */
interface Before {
  detail: ThreadDetail;
  branchIds: string[];
  /** The user message (its origin id) the new version replaces. */
  editedId: string;
  /** How many messages before it the new version shares with the old one. */
  kept: number;
}

async function versionBefore(client: ApiClient, threadId: string, editedId: string): Promise<Before> {
  const detail = await atRest(lab, client, threadId);
  const kept = detail.messages.findIndex((message) => message.id === editedId);
  expect(kept).toBeGreaterThanOrEqual(0);
  return { detail, branchIds: (await branchesOf(threadId)).map((branch) => branch.id), editedId, kept };
}

interface BranchRecord {
  id: string;
  removed_at: Date | null;
  fork_message_id: string | null;
}

async function branchesOf(threadId: string): Promise<BranchRecord[]> {
  return await lab.postgres.query(
    (sql) => sql<BranchRecord[]>`
      select id, removed_at, fork_message_id from branches where thread_id = ${threadId} order by created_at`,
  );
}

interface TurnRecord {
  id: string;
  status: string;
  branch_id: string;
  user_message_id: string | null;
  assistant_message_id: string | null;
}

async function turnOfRequest(threadId: string, clientRequestId: string): Promise<TurnRecord | undefined> {
  const [row] = await lab.postgres.query(
    (sql) => sql<TurnRecord[]>`
      select id, status, branch_id, user_message_id, assistant_message_id from chat_turn_requests
      where thread_id = ${threadId} and client_request_id = ${clientRequestId}`,
  );
  return row;
}

/** Memory threads of the person that no branch names (a version's copy left behind). */
async function strayMemoryThreads(threadId: string): Promise<string[]> {
  const rows = await lab.postgres.query(
    (sql) => sql<{ id: string }[]>`
      select m.id from mastra.mastra_threads m
      where m."resourceId" = (select owner_id from threads where id = ${threadId})
        and not exists (select 1 from branches b where b.memory_thread_id = m.id)`,
  );
  return rows.map((row) => row.id);
}

const shape = (detail: ThreadDetail) =>
  detail.messages.map((message) => ({ id: message.id, role: message.role, text: textOfMessage(message) }));

/** How the API answered the version change. */
type Answer =
  | { kind: 'accepted'; status: number; turnId: string; view?: StreamView }
  | { kind: 'refused'; status: number; unsure: boolean; body: string }
  | { kind: 'no answer'; error: string };

async function answerOf(response: Promise<Response>): Promise<Answer> {
  let answer: Response;
  try {
    answer = await response;
  } catch (error) {
    return { kind: 'no answer', error: (error as Error).message };
  }
  if (answer.status === 200) {
    const turnId = answer.headers.get('x-turn-id') ?? '';
    return { kind: 'accepted', status: 200, turnId, view: new StreamView(turnId, answer) };
  }
  if (answer.status === 202) {
    const { turn } = (await answer.json()) as { turn: { id: string } };
    return { kind: 'accepted', status: 202, turnId: turn.id };
  }
  const body = await answer.text();
  const parsed = (() => {
    try {
      return JSON.parse(body) as ErrorBody;
    } catch {
      return undefined;
    }
  })();
  return {
    kind: 'refused',
    status: answer.status,
    unsure: parsed?.error.message === refusalMessages.unavailable.unsure,
    body,
  };
}

/**
 * Checks the thread once at rest against what the version change was answered, and returns every
 * inconsistency in words (empty: none). `text`: the new version's user message.
 */
async function versionProblems(
  client: ApiClient,
  threadId: string,
  was: Before,
  request: { clientRequestId: string; text: string; answer: Answer; fault: Fault },
): Promise<string[]> {
  const problems: string[] = [];
  const { answer } = request;
  const views = answer.kind === 'accepted' && answer.view ? [answer.view] : [];
  await Promise.all(views.map((view) => view.done));
  const detail = await atRest(lab, client, threadId);
  const turn = await turnOfRequest(threadId, request.clientRequestId);
  const branches = await branchesOf(threadId);
  const added = branches.filter((branch) => !was.branchIds.includes(branch.id));
  const oldBranchId = was.detail.thread.activeBranchId;

  if (answer.kind === 'refused' && !answer.unsure && (turn || added.length > 0))
    problems.push(
      `refused with ${answer.status} ${answer.body} (as if nothing changed), but the request was recorded: ` +
        `turn ${turn ? `${turn.id} ${turn.status}` : 'none'}, new branches ${added.length}, ` +
        `shown branch ${detail.thread.activeBranchId === oldBranchId ? 'the old one' : 'the new one'}`,
    );
  if (answer.kind === 'accepted' && !turn)
    problems.push(`accepted (${answer.status}) but no turn is recorded`);
  if (added.length > 1) problems.push(`${added.length} new branches for one request`);
  if (!turn && added.length > 0) problems.push(`a new branch ${added[0]?.id} with no turn of the request`);

  if (turn) {
    const branch = added.find((candidate) => candidate.id === turn.branch_id);
    if (!branch) problems.push(`the turn runs on branch ${turn.branch_id}, not a new version`);
    if (!['completed', 'interrupted', 'failed'].includes(turn.status))
      problems.push(`the turn is ${turn.status} once the thread is at rest`);
    if (detail.thread.activeBranchId !== turn.branch_id)
      problems.push('the new version is not the one shown');
    else {
      // The new version: the shared history, the edited message, its reply.
      const shared = shape(detail).slice(0, was.kept);
      if (JSON.stringify(shared) !== JSON.stringify(shape(was.detail).slice(0, was.kept)))
        problems.push(`the new version's history differs: ${JSON.stringify(shape(detail))}`);
      const asked = detail.messages[was.kept];
      if (asked?.role !== 'user' || textOfMessage(asked) !== request.text)
        problems.push(
          `the new version does not hold the edited message "${request.text}" at ${was.kept}: ${JSON.stringify(shape(detail))}`,
        );
      else {
        if (asked.metadata.turnId !== turn.id)
          problems.push(`the edited message names turn ${asked.metadata.turnId}`);
        if (asked.metadata.version?.count !== 2 || asked.metadata.version.index !== 2)
          problems.push(
            `the edited message shows version ${JSON.stringify(asked.metadata.version)}, not 2 / 2`,
          );
      }
      const sends = [
        { text: request.text, turnId: turn.id, status: answer.kind === 'accepted' ? answer.status : 0 },
      ];
      const losses = await findLosses(lab.postgres, detail, {
        threadId,
        sends,
        views,
        fault: request.fault,
      });
      problems.push(...losses);
    }
  } else if (
    JSON.stringify(shape(detail)) !== JSON.stringify(shape(was.detail)) ||
    detail.thread.activeBranchId !== oldBranchId
  )
    problems.push(`nothing was recorded, yet the shown thread changed: ${JSON.stringify(shape(detail))}`);

  // The old version is untouched, one switch away.
  if (oldBranchId && detail.thread.activeBranchId !== oldBranchId) {
    const switched = await served(() =>
      client
        .via(lab.baseUrl)
        .fetch('PUT', `/api/threads/${threadId}/active-branch`, { branchId: oldBranchId }),
    );
    if (switched.status !== 200) problems.push(`switching back to the old version: ${switched.status}`);
    else {
      const old = (await switched.json()) as ThreadDetail;
      if (JSON.stringify(shape(old)) !== JSON.stringify(shape(was.detail)))
        problems.push(`the old version changed: ${JSON.stringify(shape(old))}`);
      const edited = old.messages[was.kept];
      if (turn && (edited?.metadata.version?.index !== 1 || edited.metadata.version.count !== 2))
        problems.push(`the old message shows version ${JSON.stringify(edited?.metadata.version)}, not 1 / 2`);
    }
  }
  return problems;
}

/** The accepted answer's stream, once `words` of the new reply have shown. */
async function streamed(answer: Answer, words: number): Promise<StreamView | undefined> {
  expect(answer.kind).toBe('accepted');
  const view = answer.kind === 'accepted' ? answer.view : undefined;
  await waitFor(
    async () => view?.wordCount ?? 0,
    (count) => count >= words,
    30_000,
  );
  return view;
}

/** A thread of two short exchanges, and a slow first message to regenerate or edit. */
async function twoExchanges(first: string, second: string) {
  const { client, threadId } = await openChat(lab);
  await exchange(client, threadId, first);
  await exchange(client, threadId, second);
  const detail = await atRest(lab, client, threadId);
  return { client, threadId, detail };
}

/** The advisory lock a turn of a `hold-commit-` request waits on as it commits (see below). */
const COMMIT_HOLD = 771177;

/**
 * A deferred trigger in the test's own database: the transaction that records a turn whose
 * `clientRequestId` starts with `hold-commit-` waits at its commit for the advisory lock
 * COMMIT_HOLD, so a test holding it can act between the last write and the commit.
 */
async function installCommitHold(): Promise<void> {
  await lab.postgres.query(async (sql) => {
    await sql.unsafe(`
      create or replace function test_hold_commit() returns trigger language plpgsql as $$
      begin
        if new.client_request_id like 'hold-commit-%' then perform pg_advisory_xact_lock(${COMMIT_HOLD}); end if;
        return null;
      end $$`);
    await sql.unsafe('drop trigger if exists test_hold_commit on chat_turn_requests');
    await sql.unsafe(`
      create constraint trigger test_hold_commit after insert on chat_turn_requests
      deferrable initially deferred for each row execute function test_hold_commit()`);
  });
}

async function removeCommitHold(): Promise<void> {
  await lab.postgres.query((sql) =>
    sql.unsafe('drop trigger if exists test_hold_commit on chat_turn_requests'),
  );
}

const lastOf = (detail: ThreadDetail, role: 'user' | 'assistant') =>
  detail.messages.findLast((message) => message.role === role);

describe('versions survive a database outage and a hard kill', () => {
  it('an edit whose new reply streams through a 5 s outage and ends in it: the reply is kept whole, both versions intact', async () => {
    const { client, threadId, detail } = await twoExchanges('first [[words:4]]', 'second [[words:4]]');
    const edited = lastOf(detail, 'user');
    const was = await versionBefore(client, threadId, edited?.id ?? '');
    const clientRequestId = crypto.randomUUID();
    const text = 'second, edited [[words:80]] [[delay:50]]';
    const answer = await answerOf(editRequest(client, threadId, was.editedId, text, clientRequestId));
    const view = await streamed(answer, 20);
    const fault = await lab.inject('outage-5s');
    await view?.done;
    expect(view?.finish).toEqual({ at: expect.any(Number), interrupted: false });
    expect(await versionProblems(client, threadId, was, { clientRequestId, text, answer, fault })).toEqual(
      [],
    );
    expect((await turnOfRequest(threadId, clientRequestId))?.status).toBe('completed');
  }, 180_000);

  it('a regenerate whose new reply is cut by a hard kill: the new version keeps the message and what streamed, the old one is untouched', async () => {
    const slow = 'tell me a story [[words:150]] [[delay:30]]';
    const { client, threadId, detail } = await twoExchanges('first [[words:4]]', slow);
    const reply = lastOf(detail, 'assistant');
    const was = await versionBefore(client, threadId, lastOf(detail, 'user')?.id ?? '');
    const clientRequestId = crypto.randomUUID();
    const answer = await answerOf(regenerateRequest(client, threadId, reply?.id ?? '', clientRequestId));
    await streamed(answer, 30);
    const fault = await lab.inject('kill');
    expect(
      await versionProblems(client, threadId, was, { clientRequestId, text: slow, answer, fault }),
    ).toEqual([]);
    expect((await turnOfRequest(threadId, clientRequestId))?.status).toBe('interrupted');
  }, 180_000);

  it('an edit of the first message (nothing copied into the new version) cut by a hard kill mid-reply', async () => {
    const { client, threadId } = await openChat(lab);
    await exchange(client, threadId, 'hello [[words:4]]');
    const detail = await atRest(lab, client, threadId);
    const was = await versionBefore(client, threadId, detail.messages[0]?.id ?? '');
    const clientRequestId = crypto.randomUUID();
    const text = 'hello again [[words:150]] [[delay:30]]';
    const answer = await answerOf(editRequest(client, threadId, was.editedId, text, clientRequestId));
    await streamed(answer, 20);
    const fault = await lab.inject('kill');
    expect(await versionProblems(client, threadId, was, { clientRequestId, text, answer, fault })).toEqual(
      [],
    );
  }, 180_000);

  it('a regenerate whose reply ends during a 5 s outage (its settle waits): completed, kept whole', async () => {
    const slow = 'short story [[words:40]] [[delay:50]]';
    const { client, threadId, detail } = await twoExchanges('first [[words:4]]', slow);
    const reply = lastOf(detail, 'assistant');
    const was = await versionBefore(client, threadId, lastOf(detail, 'user')?.id ?? '');
    const clientRequestId = crypto.randomUUID();
    const answer = await answerOf(regenerateRequest(client, threadId, reply?.id ?? '', clientRequestId));
    const view = await streamed(answer, 34);
    const fault = await lab.inject('outage-5s');
    await view?.done;
    expect(view?.finish).toEqual({ at: expect.any(Number), interrupted: false });
    expect(
      await versionProblems(client, threadId, was, { clientRequestId, text: slow, answer, fault }),
    ).toEqual([]);
    expect((await turnOfRequest(threadId, clientRequestId))?.status).toBe('completed');
  }, 180_000);

  it('an edit met by an outage just after it is sent: answered and kept, or refused with nothing changed', async () => {
    const report: string[] = [];
    const strays: string[] = [];
    for (const afterMs of [0, 5, 15, 40]) {
      await lab.serving();
      const { client, threadId, detail } = await twoExchanges('first [[words:4]]', 'second [[words:4]]');
      const was = await versionBefore(client, threadId, lastOf(detail, 'user')?.id ?? '');
      const clientRequestId = crypto.randomUUID();
      const text = `edited ${afterMs} [[words:12]] [[delay:20]]`;
      const sending = answerOf(editRequest(client, threadId, was.editedId, text, clientRequestId));
      await sleepUntil(Date.now() + afterMs);
      const fault = await lab.inject('outage-5s');
      const answer = await sending;
      const problems = await versionProblems(client, threadId, was, { clientRequestId, text, answer, fault });
      const stray = await strayMemoryThreads(threadId);
      if (stray.length > 0) strays.push(`${afterMs} ms: ${stray.length} memory threads no branch names`);
      report.push(
        `${afterMs} ms: ${answer.kind}${'status' in answer ? ` ${answer.status}` : ''}` +
          `${answer.kind === 'refused' ? ` ${answer.body}` : ''}${problems.length ? ` PROBLEMS: ${problems.join('; ')}` : ''}`,
      );
    }
    // A rolled-back edit leaves no copy of the history behind either.
    expect(
      { problems: report.filter((line) => line.includes('PROBLEMS')), strays },
      ['edit + outage just after:', ...report].join('\n  '),
    ).toEqual({ problems: [], strays: [] });
  }, 600_000);

  it('answers an edit whose commit lands just before the database goes away with its reply, never a refusal (nothing after the commit reads the database before the answer)', async () => {
    await lab.serving();
    await installCommitHold();
    try {
      const { client, threadId, detail } = await twoExchanges('first [[words:4]]', 'second [[words:4]]');
      const was = await versionBefore(client, threadId, lastOf(detail, 'user')?.id ?? '');
      const clientRequestId = `hold-commit-${crypto.randomUUID()}`;
      const text = 'edited as the database goes [[words:12]]';
      // The edit's transaction is held at its commit; a lock of the test's on the branches table
      // queues behind it, so a read the API makes of that table after the commit waits until the
      // database goes away (an answer that waited for one was refused as if nothing changed).
      const { sending } = await lab.postgres.query(async (hold) => {
        await hold`select pg_advisory_lock(${COMMIT_HOLD})`;
        const sending = answerOf(editRequest(client, threadId, was.editedId, text, clientRequestId));
        await waitFor(
          () => lockWaiters(lab, '%', 'advisory'),
          (count) => count > 0,
          30_000,
        );
        let granted = () => {};
        const taken = new Promise<void>((resolve) => {
          granted = resolve;
        });
        void lab.postgres
          .query((sql) =>
            sql.begin(async (lock) => {
              await lock`lock table branches in access exclusive mode`;
              granted();
              await new Promise((resolve) => setTimeout(resolve, 60_000));
            }),
          )
          .catch(() => undefined);
        await waitFor(
          () => lockWaiters(lab, 'lock table branches%', 'relation'),
          (count) => count > 0,
          30_000,
        );
        await hold`select pg_advisory_unlock(${COMMIT_HOLD})`;
        await taken;
        return { sending };
      });
      // Committed: the turn is recorded.
      expect((await turnOfRequest(threadId, clientRequestId))?.status).toBe('running');
      // Whatever reads that table after the commit has reached the lock by now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The database goes away: its connections are cut, those waiting on the lock first (by
      // hand, so that the test's lock, cut too by the shutdown, cannot let a read through first),
      // then the server stops for 5 s.
      await lab.postgres.query(
        (sql) => sql`
          select pg_terminate_backend(pid) from pg_stat_activity
          where wait_event_type = 'Lock' and wait_event = 'relation' and pid <> pg_backend_pid()
            and query ilike '%"branches"%'`,
      );
      const fault = await lab.inject('outage-5s');
      const answer = await sending;
      const problems = await versionProblems(client, threadId, was, { clientRequestId, text, answer, fault });
      expect({ answer: answer.kind === 'accepted' ? answer.status : answer, problems }).toEqual({
        answer: 200,
        problems: [],
      });
    } finally {
      await removeCommitHold().catch(() => undefined);
    }
  }, 180_000);

  it("leaves nothing in memory of an edit rolled back by a hard kill after its history was copied: no stray copy outlives the chat's deletion", async () => {
    await lab.serving();
    const { client, threadId, detail } = await twoExchanges(
      'first, private [[words:4]]',
      'second [[words:4]]',
    );
    const was = await versionBefore(client, threadId, lastOf(detail, 'user')?.id ?? '');
    const clientRequestId = crypto.randomUUID();
    const text = 'edited, then killed [[words:12]]';
    const [owner] = await lab.postgres.query(
      (sql) => sql<{ id: string }[]>`select owner_id as id from threads where id = ${threadId}`,
    );
    // The edit's transaction is held at its lineage write, which comes after the copy of the
    // history into the new version's memory thread.
    const killing = await lab.postgres.query(async (sql) =>
      sql.begin(async (lock) => {
        await lock`lock table message_lineage in access exclusive mode`;
        const sending = answerOf(editRequest(client, threadId, was.editedId, text, clientRequestId));
        await waitFor(
          () => lockWaiters(lab, '%message_lineage%', 'relation'),
          (count) => count > 0,
          30_000,
        );
        // Killed while held; the lock is let go once the API is gone (its answer broke), so the
        // held transaction (its client gone) rolls back and the new API's start is not held up.
        const killed = lab.inject('kill');
        expect((await sending).kind).toBe('no answer');
        return { killed };
      }),
    );
    await killing.killed;
    // The edit never committed: the thread is as it was, and memory holds no copy of it.
    expect(await turnOfRequest(threadId, clientRequestId)).toBeUndefined();
    expect(shape(await atRest(lab, client, threadId))).toEqual(shape(was.detail));
    expect(await strayMemoryThreads(threadId)).toEqual([]);
    // Deleting the chat deletes its text (spec: "Text goes with what is deleted").
    const deleted = await served(() => client.via(lab.baseUrl).fetch('DELETE', `/api/threads/${threadId}`));
    expect(deleted.status).toBeLessThan(300);
    const left = await lab.postgres.query(
      (sql) => sql<{ content: string }[]>`
        select content::text as content from mastra.mastra_messages
        where "resourceId" = ${owner?.id ?? ''} and content::text like '%first, private%'`,
    );
    expect(left.map((row) => row.content)).toEqual([]);
  }, 180_000);

  it('a regenerate met by a hard kill just after it is sent: a consistent version, or none', async () => {
    const report: string[] = [];
    const strays: string[] = [];
    for (const afterMs of [0, 20, 60, 150]) {
      await lab.serving();
      const slow = `story ${afterMs} [[words:12]] [[delay:20]]`;
      const { client, threadId, detail } = await twoExchanges('first [[words:4]]', slow);
      const reply = lastOf(detail, 'assistant');
      const was = await versionBefore(client, threadId, lastOf(detail, 'user')?.id ?? '');
      const clientRequestId = crypto.randomUUID();
      const sending = answerOf(regenerateRequest(client, threadId, reply?.id ?? '', clientRequestId));
      await sleepUntil(Date.now() + afterMs);
      const fault = await lab.inject('kill');
      const answer = await sending;
      const problems = await versionProblems(client, threadId, was, {
        clientRequestId,
        text: slow,
        answer,
        fault,
      });
      const stray = await strayMemoryThreads(threadId);
      if (stray.length > 0) strays.push(`${afterMs} ms: ${stray.length} memory threads no branch names`);
      const turn = await turnOfRequest(threadId, clientRequestId);
      report.push(
        `${afterMs} ms: ${answer.kind}${'status' in answer ? ` ${answer.status}` : ''}, turn ${turn?.status ?? 'none'}` +
          `${problems.length ? ` PROBLEMS: ${problems.join('; ')}` : ''}`,
      );
    }
    expect(
      { problems: report.filter((line) => line.includes('PROBLEMS')), strays },
      ['regenerate + kill just after:', ...report].join('\n  '),
    ).toEqual({ problems: [], strays: [] });
  }, 600_000);
});
