import type { ErrorBody, HitlRequest, ThreadDetail, Turn } from '@chat/contracts';
import { schema } from '@chat/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  type StreamChunk,
  textOfChunks,
  textOfMessage,
  waitFor,
} from './support/client';
import { type TestApi, useTestApi } from './support/testApi';

let api: TestApi;
let client: ApiClient;
useTestApi((started) => {
  ({ api, client } = started);
});

/** Sends `[[tool:save_note]]` to a new thread; its stream ends with the approval request. */
async function threadWaitingForApproval(note = 'buy milk') {
  const threadId = await client.createThread();
  const { turnId, chunks } = await client.sendAndRead(threadId, `${note} [[tool:save_note]] [[words:12]]`);
  const detail = await client.detail(threadId);
  const request = detail.hitl.find((entry) => entry.status === 'pending') as HitlRequest;
  return { threadId, turnId, chunks, detail, request };
}

function decide(threadId: string, requestId: string, decision: unknown): Promise<Response> {
  return client.fetch('POST', `/api/threads/${threadId}/hitl/${requestId}`, { decision });
}

async function notesIn(threadId: string) {
  return await api.runtime.database.db.select().from(schema.notes).where(eq(schema.notes.threadId, threadId));
}

/** Follows a thread's events until the test is done with them. */
function followEvents(threadId: string) {
  const controller = new AbortController();
  const events: StreamChunk[] = [];
  const reading = (async () => {
    const response = await client.fetch('GET', `/api/threads/${threadId}/events`, undefined, {
      signal: controller.signal,
    });
    try {
      for await (const event of iterateChunks(response)) events.push(event);
    } catch {
      // Aborted by close().
    }
  })();
  return {
    events,
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

describe('tools that need no approval', () => {
  it('runs current_time at once and the reply uses its result', async () => {
    const threadId = await client.createThread();
    const before = Date.now();
    const { chunks } = await client.sendAndRead(
      threadId,
      'what time is it [[tool:current_time]] [[words:12]]',
    );
    const output = chunks.find((chunk) => chunk.type === 'tool-output-available') as
      | { output: { now: string } }
      | undefined;
    expect(output).toBeDefined();
    const now = Date.parse(output?.output.now ?? '');
    expect(now).toBeGreaterThanOrEqual(before - 1000);
    expect(now).toBeLessThanOrEqual(Date.now() + 1000);
    expect(textOfChunks(chunks)).toContain(`The tool current_time returned {"now":"${output?.output.now}"}`);
    expect(chunks.some((chunk) => chunk.type === 'tool-approval-request')).toBe(false);

    const detail = await client.detail(threadId);
    expect(detail.hitl).toEqual([]);
    expect(detail.turnQueue.activeTurn).toBeNull();
    const reply = detail.messages.at(-1);
    expect(textOfMessage(reply)).toContain('The tool current_time returned');
  });

  it('says it has no such tool for an unknown name, and calls nothing', async () => {
    const threadId = await client.createThread();
    const { chunks } = await client.sendAndRead(threadId, 'hi [[tool:launch_rockets]] [[words:12]]');
    expect(textOfChunks(chunks)).toContain('I have no tool named launch_rockets.');
    expect(chunks.some((chunk) => chunk.type.startsWith('tool-'))).toBe(false);
  });
});

describe('save_note waits for a person (H3, Q12)', () => {
  it('pauses with a pending request in the stream, thread detail and thread events', async () => {
    const threadId = await client.createThread();
    const events = followEvents(threadId);
    await waitFor(
      async () => events.events.length,
      (count) => count >= 1,
    );
    const { turnId, chunks } = await client.sendAndRead(threadId, 'buy milk [[tool:save_note]]');

    const input = chunks.find((chunk) => chunk.type === 'tool-input-available');
    expect(input).toMatchObject({ toolName: 'save_note', input: { text: 'buy milk' } });
    const approval = chunks.find((chunk) => chunk.type === 'tool-approval-request');
    expect(approval).toMatchObject({ toolCallId: input?.toolCallId });
    expect(chunks.at(-1)).toEqual({ type: 'finish' });
    // Mastra's resume handle stays on the server.
    expect(JSON.stringify(chunks)).not.toContain('data-tool-call-approval');

    const detail = await client.detail(threadId);
    expect(detail.turnQueue.activeTurn).toMatchObject({ id: turnId, status: 'awaiting_approval' });
    expect(detail.hitl).toEqual([
      {
        id: approval?.approvalId,
        turnId,
        toolName: 'save_note',
        toolCallId: input?.toolCallId,
        args: { text: 'buy milk' },
        status: 'pending',
        createdAt: expect.any(String),
        decidedAt: null,
      },
    ]);
    const toolPart = detail.messages.at(-1)?.parts.find((part) => part.type === 'tool-save_note');
    expect(toolPart).toMatchObject({ toolCallId: input?.toolCallId, approval: { id: approval?.approvalId } });
    expect(await notesIn(threadId)).toEqual([]);

    const pending = await waitFor(
      async () => events.events.find((event) => event.type === 'hitl.changed'),
      (event) => event !== undefined,
    );
    expect(pending).toMatchObject({
      hitl: [{ id: approval?.approvalId, status: 'pending' }],
      turnQueue: { activeTurn: { id: turnId, status: 'awaiting_approval' } },
    });
    await events.close();

    // No runner, no lease: the sweeper has nothing to settle.
    const [row] = await api.runtime.database.db
      .select()
      .from(schema.chatTurnRequests)
      .where(eq(schema.chatTurnRequests.id, turnId));
    expect(row).toMatchObject({ status: 'awaiting_approval', runnerId: null, leaseExpiresAt: null });
  });

  it('queues sends, refuses a claim with hitl_pending, and approve runs the tool and the same turn', async () => {
    const { threadId, turnId, request } = await threadWaitingForApproval('call the bank');
    const queued = await client.queued(threadId, 'next one [[words:5]]');

    const claim = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.status).toBe(409);
    expect(claim.body.error).toMatchObject({ code: 'not_eligible', reason: 'hitl_pending' });

    const approved = await decide(threadId, request.id, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.headers.get('x-turn-id')).toBe(turnId);
    const chunks = await readChunks(approved);
    const output = chunks.find((chunk) => chunk.type === 'tool-output-available') as
      | { output: { saved: boolean; noteId: string } }
      | undefined;
    expect(output?.output.saved).toBe(true);
    expect(textOfChunks(chunks)).toContain('The tool save_note returned {"saved":true');

    const notes = await notesIn(threadId);
    expect(notes.map((note) => [note.id, note.text])).toEqual([[output?.output.noteId, 'call the bank']]);
    const detail = await client.detail(threadId);
    expect(detail.notes).toEqual([
      { id: output?.output.noteId, text: 'call the bank', createdAt: expect.any(String) },
    ]);
    expect(detail.hitl).toMatchObject([
      { id: request.id, status: 'approved', decidedAt: expect.any(String) },
    ]);
    expect(detail.turnQueue.activeTurn).toBeNull();
    // The queued head is eligible again, and runs.
    expect(detail.turnQueue.items.map((item) => item.id)).toEqual([queued.id]);
    const next = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(next.status).toBe(200);
    expect(next.headers.get('x-turn-id')).toBe(queued.id);
    await readChunks(next);

    const turns = await api.runtime.database.db
      .select()
      .from(schema.chatTurnRequests)
      .where(eq(schema.chatTurnRequests.threadId, threadId));
    expect(turns.map((turn) => [turn.id, turn.status]).sort()).toEqual(
      [
        [turnId, 'completed'],
        [queued.id, 'completed'],
      ].sort(),
    );
  });

  it('deny stores nothing and the reply says so', async () => {
    const { threadId, turnId, request } = await threadWaitingForApproval('secret plan');
    const denied = await decide(threadId, request.id, 'deny');
    expect(denied.status).toBe(200);
    const chunks = await readChunks(denied);
    expect(chunks.some((chunk) => chunk.type === 'tool-output-denied')).toBe(true);
    expect(textOfChunks(chunks)).toContain('The tool save_note was denied, so I answer without it.');
    expect(await notesIn(threadId)).toEqual([]);
    const detail = await client.detail(threadId);
    expect(detail.hitl).toMatchObject([{ id: request.id, status: 'denied' }]);
    expect(detail.notes).toEqual([]);
    const turn = (await client.json<{ turn: Turn | null }>('POST', `/api/threads/${threadId}/interrupt`))
      .body;
    expect(turn.turn).toBeNull();
    const reply = detail.messages.at(-1);
    expect(textOfMessage(reply)).toContain('was denied');
    expect(detail.messages.some((message) => message.metadata.turnId === turnId)).toBe(true);
  });

  it('refuses a second decision with already_decided, and changes nothing', async () => {
    const { threadId, request } = await threadWaitingForApproval('only once');
    await readChunks(await decide(threadId, request.id, 'approve'));
    const again = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
      decision: 'deny',
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_decided');
    expect((await client.detail(threadId)).hitl).toMatchObject([{ status: 'approved' }]);
    expect(await notesIn(threadId)).toHaveLength(1);
  });

  it('answers bad input with 400 or 404 and changes nothing', async () => {
    const { threadId, request } = await threadWaitingForApproval('keep waiting');
    const path = `/api/threads/${threadId}/hitl/${request.id}`;
    const badValue = await client.json<ErrorBody>('POST', path, { decision: 'maybe' });
    expect(badValue.status).toBe(400);
    expect(badValue.body.error.code).toBe('bad_request');
    const noBody = await client.json<ErrorBody>('POST', path, {});
    expect(noBody.status).toBe(400);
    const unknown = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/hitl/${crypto.randomUUID()}`,
      {
        decision: 'approve',
      },
    );
    expect(unknown.status).toBe(404);
    const notAnId = await client.json<ErrorBody>('POST', `/api/threads/${threadId}/hitl/nope`, {
      decision: 'approve',
    });
    expect(notAnId.status).toBe(404);

    const stranger = await api.client();
    const foreign = await stranger.json<ErrorBody>('POST', path, { decision: 'approve' });
    expect(foreign.status).toBe(404);
    const strangersThread = await stranger.createThread();
    const crossed = await stranger.json<ErrorBody>(
      'POST',
      `/api/threads/${strangersThread}/hitl/${request.id}`,
      { decision: 'approve' },
    );
    expect(crossed.status).toBe(404);

    const detail = await client.detail(threadId);
    expect(detail.hitl).toMatchObject([{ id: request.id, status: 'pending' }]);
    expect(detail.turnQueue.activeTurn?.status).toBe('awaiting_approval');
    expect(await notesIn(threadId)).toEqual([]);
  });

  it('Stop while pending cancels the request, interrupts the turn and keeps the queue, paused', async () => {
    const { threadId, turnId, request } = await threadWaitingForApproval('never mind');
    const queued = await client.queued(threadId, 'still here [[words:12]]');
    const stopped = await client.json<{ turn: Turn | null; queuePaused?: boolean }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(stopped.status).toBe(200);
    expect(stopped.body.turn).toMatchObject({ id: turnId, status: 'interrupted' });
    expect(stopped.body.queuePaused).toBe(true);

    const detail: ThreadDetail = await client.detail(threadId);
    expect(detail.hitl).toMatchObject([
      { id: request.id, status: 'cancelled', decidedAt: expect.any(String) },
    ]);
    expect(detail.turnQueue).toMatchObject({
      activeTurn: null,
      items: [{ id: queued.id, status: 'queued' }],
      paused: true,
    });
    const toolPart = detail.messages.at(-1)?.parts.find((part) => part.type === 'tool-save_note');
    expect(toolPart).toMatchObject({ state: 'output-denied' });
    const again = await decide(threadId, request.id, 'approve');
    expect(again.status).toBe(409);
    expect(await notesIn(threadId)).toEqual([]);

    // Resumed, the closed tool call does not break the next model call, which gets the handoff (S5).
    await client.json('PUT', `/api/threads/${threadId}/queue/paused`, { paused: false });
    const next = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(next.status).toBe(200);
    expect(textOfChunks(await readChunks(next))).toMatch(/^\(after interruption\) You said: "still here"\./);
  });

  it('Stop & send on the head cancels the approval and runs the head with the handoff', async () => {
    const { threadId, turnId, request } = await threadWaitingForApproval('draft');
    const head = await client.queued(threadId, 'actually do this [[words:8]]');
    const response = await client.fetch('POST', `/api/threads/${threadId}/queue/${head.id}/send-now`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-turn-id')).toBe(head.id);
    expect(textOfChunks(await readChunks(response))).toContain(
      '(after interruption) You said: "actually do this".',
    );

    const detail = await client.detail(threadId);
    expect(detail.hitl).toMatchObject([{ id: request.id, status: 'cancelled' }]);
    const turns = await api.runtime.database.db
      .select()
      .from(schema.chatTurnRequests)
      .where(eq(schema.chatTurnRequests.threadId, threadId));
    expect(Object.fromEntries(turns.map((turn) => [turn.id, turn.status]))).toEqual({
      [turnId]: 'interrupted',
      [head.id]: 'completed',
    });
    expect(await notesIn(threadId)).toEqual([]);
  });

  it('keeps approval ids, run ids and tool arguments out of a share snapshot', async () => {
    const { threadId, request } = await threadWaitingForApproval('private errand');
    const snapshotOf = async () => {
      const created = await client.json<{ share: { token: string } }>(
        'POST',
        `/api/threads/${threadId}/shares`,
        {},
      );
      expect(created.status).toBe(201);
      const shared = await fetch(`${api.baseUrl}/api/shares/${created.body.share.token}`);
      expect(shared.status).toBe(200);
      return await shared.text();
    };
    // While the request is pending its reply has not settled: nothing of it is shared (H1).
    expect((JSON.parse(await snapshotOf()) as { messages: unknown[] }).messages).toEqual([]);
    // Stopped, the turn settles with its call closed: shared, without any of the approval's internals.
    await client.json('POST', `/api/threads/${threadId}/interrupt`);
    const snapshot = await snapshotOf();
    const [row] = await api.runtime.database.db
      .select()
      .from(schema.hitlRequests)
      .where(eq(schema.hitlRequests.id, request.id));
    expect(snapshot).toContain('private errand [[tool:save_note]]');
    for (const secret of [
      request.id,
      request.toolCallId,
      row?.runId ?? 'no run id',
      '"text":"private errand"',
      'tool-',
    ]) {
      expect(snapshot).not.toContain(secret);
    }
  });

  it('refuses version changes while an approval is pending', async () => {
    const { threadId, detail } = await threadWaitingForApproval('versions wait');
    const userMessage = detail.messages.find((message) => message.role === 'user');
    const edit = await client.json<ErrorBody>(
      'POST',
      `/api/threads/${threadId}/messages/${userMessage?.id}/versions`,
      { clientRequestId: 'edit-1', text: 'edited' },
    );
    expect(edit.status).toBe(409);
    expect(edit.body.error.code).toBe('thread_busy');
  });
});
