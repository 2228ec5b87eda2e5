import type { ErrorBody, HitlRequest, Thread, ThreadDetail } from '@chat/contracts';
import { describe, expect, it } from 'vitest';
import { TOOL_OFF_REASON } from '../src/agent/toolPolicy';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readChunksUntil,
  readRest,
  type StreamChunk,
  textOfChunks,
  waitFor,
} from './support/client';
import { useTestApi } from './support/testApi';

let client: ApiClient;
useTestApi((started) => {
  ({ client } = started);
});

function setTools(threadId: string, tools: unknown) {
  return client.json<Thread | ErrorBody>('PATCH', `/api/threads/${threadId}`, { tools });
}

function modesOf(detail: ThreadDetail): Record<string, string> {
  return Object.fromEntries(detail.tools.map((tool) => [tool.name, tool.mode]));
}

const outputs = (chunks: StreamChunk[]) => chunks.filter((chunk) => chunk.type === 'tool-output-available');

describe('per-chat tool settings (T1)', () => {
  it("shows every tool with the server's defaults in the thread detail", async () => {
    const threadId = await client.createThread();
    const detail = await client.detail(threadId);
    expect(detail.tools).toEqual([
      expect.objectContaining({ name: 'current_time', mode: 'allow', defaultMode: 'allow' }),
      expect.objectContaining({ name: 'save_note', mode: 'ask', defaultMode: 'ask' }),
    ]);
    expect(detail.tools.every((tool) => tool.description.length > 0)).toBe(true);
  });

  it('stores a change on the thread, keeps the other tools, and tells other tabs', async () => {
    const threadId = await client.createThread();
    const events = await client.fetch('GET', `/api/threads/${threadId}/events`);
    const stream = iterateChunks(events);
    const changed = await setTools(threadId, { save_note: 'allow' });
    expect(changed.status).toBe(200);
    await readChunksUntil(stream, (chunk) => chunk.type === 'thread.changed');
    await stream.return(undefined);
    expect(modesOf(await client.detail(threadId))).toEqual({ current_time: 'allow', save_note: 'allow' });
    await setTools(threadId, { current_time: 'off' });
    expect(modesOf(await client.detail(threadId))).toEqual({ current_time: 'off', save_note: 'allow' });
  });

  it('refuses an unknown tool or mode with a clear 400 and changes nothing', async () => {
    const threadId = await client.createThread();
    const unknown = await setTools(threadId, { save_note: 'allow', launch_rockets: 'allow' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      error: {
        code: 'bad_request',
        message: 'Invalid request body: tools.launch_rockets: names no tool of this server.',
      },
    });
    for (const tools of [{ save_note: 'sometimes' }, {}, ['save_note'], 'allow', { 'bad name': 'off' }]) {
      const refused = await setTools(threadId, tools);
      expect(refused.status, JSON.stringify(tools)).toBe(400);
      expect((refused.body as ErrorBody).error.code).toBe('bad_request');
    }
    expect(modesOf(await client.detail(threadId))).toEqual({ current_time: 'allow', save_note: 'ask' });
  });

  it('keeps the settings out of a share and an export', async () => {
    const threadId = await client.createThread();
    await setTools(threadId, { save_note: 'allow' });
    await client.sendAndRead(threadId, 'hello [[words:3]]');
    const exported = await client.fetch('GET', `/api/threads/${threadId}/export?format=json`);
    expect(exported.status).toBe(200);
    const shared = await client.json<{ share: { token: string } }>('POST', `/api/threads/${threadId}/shares`);
    const read = await client.fetch('GET', `/api/shares/${shared.body.share.token}`);
    for (const text of [await exported.text(), await read.text()]) {
      expect(text).not.toMatch(/tool_?modes|"tools"|defaultMode/i);
    }
  });

  it('does not offer an off tool, and runs an allowed save_note without asking', async () => {
    const threadId = await client.createThread();
    await setTools(threadId, { current_time: 'off', save_note: 'allow' });
    const off = await client.sendAndRead(threadId, 'time? [[tool:current_time]] [[words:12]]');
    expect(textOfChunks(off.chunks)).toContain('I have no tool named current_time.');
    expect(off.chunks.some((chunk) => chunk.type.startsWith('tool-'))).toBe(false);

    const allowed = await client.sendAndRead(threadId, 'buy milk [[tool:save_note]] [[words:3]]');
    expect(allowed.chunks.some((chunk) => chunk.type === 'tool-approval-request')).toBe(false);
    expect(outputs(allowed.chunks)).toEqual([
      expect.objectContaining({ output: expect.objectContaining({ saved: true }) }),
    ]);
    const detail = await client.detail(threadId);
    expect(detail.notes.map((note) => note.text)).toEqual(['buy milk']);
    expect(detail.hitl).toEqual([]);
  });

  it('asks before current_time once the chat says ask', async () => {
    const threadId = await client.createThread();
    await setTools(threadId, { current_time: 'ask' });
    const { chunks } = await client.sendAndRead(threadId, 'time? [[tool:current_time]] [[words:12]]');
    expect(chunks.some((chunk) => chunk.type === 'tool-approval-request')).toBe(true);
    const detail = await client.detail(threadId);
    expect(detail.hitl).toEqual([expect.objectContaining({ toolName: 'current_time', status: 'pending' })]);
  });
});

describe('a change reaches the running reply at its next step (T2)', () => {
  it('a tool switched off mid-reply is no longer offered at the next model call', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'walk [[steps:3]] [[delay:1500]] [[words:8]]');
    const stream = iterateChunks(reply);
    const before = await readChunksUntil(stream, (chunk) => chunk.type === 'tool-output-available');
    expect((await setTools(threadId, { current_time: 'off' })).status).toBe(200);
    const after = await readRest(stream);
    // The call the model was making as the change landed is refused (closed), and the step after
    // it offers the model no current_time.
    expect(outputs([...before, ...after])).toHaveLength(1);
    expect(after.some((chunk) => chunk.type === 'tool-output-error')).toBe(true);
    expect(textOfChunks(after)).toContain('I have no tool named current_time.');
  });

  it('a tool switched to ask mid-reply asks at its next call', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'walk [[steps:3]] [[delay:1500]] [[words:12]]');
    const stream = iterateChunks(reply);
    await readChunksUntil(stream, (chunk) => chunk.type === 'tool-output-available');
    expect((await setTools(threadId, { current_time: 'ask' })).status).toBe(200);
    const after = await readRest(stream);
    expect(outputs(after)).toHaveLength(0);
    expect(after.some((chunk) => chunk.type === 'tool-approval-request')).toBe(true);
    const detail = await client.detail(threadId);
    const pending = detail.hitl.filter((request: HitlRequest) => request.status === 'pending');
    expect(pending).toEqual([expect.objectContaining({ toolName: 'current_time' })]);
    expect(detail.turnQueue.activeTurn?.status).toBe('awaiting_approval');
  });

  it('reaches a reply resumed after an approval too', async () => {
    const threadId = await client.createThread();
    await setTools(threadId, { current_time: 'ask' });
    const first = await client.sendAndRead(threadId, 'walk [[steps:3]] [[words:12]]');
    expect(first.chunks.some((chunk) => chunk.type === 'tool-approval-request')).toBe(true);
    const request = (await client.detail(threadId)).hitl[0] as HitlRequest;
    // A setting that leaves this tool asking decides nothing.
    await setTools(threadId, { save_note: 'allow' });
    expect((await client.detail(threadId)).hitl[0]?.status).toBe('pending');
    await setTools(threadId, { current_time: 'allow', save_note: 'ask' });
    expect((await client.detail(threadId)).hitl[0]?.status).toBe('approved');
    await waitForIdle(threadId);
    // The change approved it already.
    const approved = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
      decision: 'approve',
    });
    expect(approved.status).toBe(409);
    // All three calls ran: the approved one and the two the chat now allows without asking.
    const messages = JSON.stringify((await client.detail(threadId)).messages);
    expect(messages.match(/"output-available"/g)?.length).toBe(3);
    expect((await client.detail(threadId)).hitl).toHaveLength(1);
  });

  it('a pending approval of a tool switched off is denied, and the reply goes on without it', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'buy milk [[tool:save_note]] [[words:12]]');
    expect((await setTools(threadId, { save_note: 'off' })).status).toBe(200);
    const detail = await waitForIdle(threadId);
    expect(detail.hitl.map((request) => request.status)).toEqual(['denied']);
    expect(detail.notes).toEqual([]);
    expect(JSON.stringify(detail.messages.at(-1)?.parts)).toContain('The tool save_note was denied');
  });

  it('a tool call refused as off mid-reply tells the model the change applies from the next reply', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'walk [[steps:2]] [[delay:1500]] [[words:8]]');
    const stream = iterateChunks(reply);
    await readChunksUntil(stream, (chunk) => chunk.type === 'tool-output-available');
    await setTools(threadId, { current_time: 'off' });
    const after = await readRest(stream);
    const refused = after.find((chunk) => chunk.type === 'tool-output-error') as
      | { errorText: string }
      | undefined;
    expect(refused?.errorText).toContain(TOOL_OFF_REASON);
  });
});

describe('"Allow for this chat" on an approval card (T1)', () => {
  it('approves the call and allows the tool in this chat, in one request', async () => {
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'buy milk [[tool:save_note]] [[words:12]]');
    const request = (await client.detail(threadId)).hitl[0] as HitlRequest;
    const denyAndAllow = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
      decision: 'deny',
      allowForChat: true,
    });
    expect(denyAndAllow.status).toBe(400);
    expect((await client.detail(threadId)).hitl[0]?.status).toBe('pending');

    const approved = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request.id}`, {
      decision: 'approve',
      allowForChat: true,
    });
    expect(approved.status).toBe(200);
    expect(textOfChunks(await readChunks(approved))).toContain('The tool save_note returned');
    const detail = await client.detail(threadId);
    expect(modesOf(detail).save_note).toBe('allow');
    expect(detail.hitl[0]?.status).toBe('approved');

    const next = await client.sendAndRead(threadId, 'buy bread [[tool:save_note]] [[words:12]]');
    expect(next.chunks.some((chunk) => chunk.type === 'tool-approval-request')).toBe(false);
    expect((await client.detail(threadId)).notes.map((note) => note.text)).toEqual(['buy milk', 'buy bread']);
  });
});

async function waitForIdle(threadId: string): Promise<ThreadDetail> {
  await waitFor(
    () => client.detail(threadId),
    (detail) => detail.turnQueue.activeTurn === null,
    20_000,
  );
  return await client.detail(threadId);
}
