import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV4, LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { Thread } from '@chat/contracts';
import { turnErrorMessages } from '@chat/contracts';
import { wrapLanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverFor, type RuntimeName } from '../src/chats/turns/driver/choice';
import { ClaudeCodeDriver } from '../src/chats/turns/driver/claudeCode/claudeCodeDriver';
import type { DriverEvent, DriverTurn, RuntimeDriver } from '../src/chats/turns/driver/types';
import { WordedFailure } from '../src/platform/errors';
import {
  type ApiClient,
  iterateChunks,
  readChunks,
  readChunksUntil,
  readRest,
  type StreamChunk,
  textOfChunks,
  textOfMessage,
  untilIdle,
  waitFor,
} from './support/client';
import { OwnedPostgres } from './support/faults/ownedPostgres';
import { type MessagesApiServer, startMessagesApi } from './support/messagesApiServer';
import { type Script, ScriptedDriver } from './support/scriptedDriver';
import { startTestApi, type TestApi, turnRow } from './support/testApi';

/**
 * The runtime driver contract: what the host relies on of every driver, checked against each
 * driver in the test command (the Mastra agent, the AI SDK `streamText` driver, the scripted test
 * driver), through a real API on a real database: a reply streams; a steer is taken in at a step
 * boundary, and one that finds none is handed back and queued first; an approval suspends and
 * resumes with the decision; tool modes change live; usage is reported; Stop aborts the model
 * call; the resume token is kept on the final reply, failed turns included; a summary for
 * compaction; a database outage at a run's start is `unavailable`; a model no longer configured
 * fails the run. An approval surviving a hard kill of the API is `approvalsRestart.test.ts`, per
 * runtime. What the scripted driver does not have (a model: tools, approvals, usage, a summary)
 * is not asked of it.
 */

interface DriverCase {
  name: string;
  /** The driver the API runs its turns through. */
  make(agent: Parameters<typeof driverFor>[1], db: Parameters<typeof driverFor>[2]): Promise<RuntimeDriver>;
  /** A model stands behind it: usage is reported, and its replies have the scripted sentences. */
  model: boolean;
  /** It runs the product's tools (current_time, save_note): approvals, live modes, a summary. */
  chatTools: boolean;
  /** It reads the conversation from the database as a run starts (so an outage then is `unavailable`). */
  readsDatabase: boolean;
  /** Whether the model call of the stopped run was cut off; undefined: the watched AI SDK call is checked. */
  modelCallCut?(): boolean;
  /** A reply that takes `steps` step boundaries, and the chunk that shows it is between two. */
  stepped(text: string, steps: number, delayMs: number, words: number): string;
  midReply: StreamChunk['type'];
}

const localModel = {
  model: true,
  chatTools: true,
  readsDatabase: true,
  stepped: (text: string, steps: number, delayMs: number, words: number) =>
    `${text} [[steps:${steps}]] [[delay:${delayMs}]] [[words:${words}]]`,
  midReply: 'tool-input-available',
} as const;

/** The scripted driver's reading of the local model's directives: `words`, `delay`, `fail`, `steps`. */
function scriptOf(text: string): Script {
  const number = (name: string) => Number(new RegExp(`\\[\\[${name}:(\\d+)\\]\\]`).exec(text)?.[1] ?? NaN);
  const words = Number.isNaN(number('words')) ? 12 : number('words');
  const steps = number('steps');
  return {
    words,
    delayMs: Number.isNaN(number('delay')) ? 5 : number('delay'),
    ...(text.includes('[[fail]]') ? { failAfter: 1 } : {}),
    // A boundary after every two words, for as many steps as asked.
    ...(Number.isNaN(steps) || steps < 2 ? {} : { stepEvery: 2 }),
  };
}

const DRIVERS: DriverCase[] = [
  { name: 'mastra', make: (agent, db) => driverFor('mastra', agent, db), ...localModel },
  { name: 'ai-sdk', make: (agent, db) => driverFor('ai-sdk', agent, db), ...localModel },
  {
    name: 'scripted',
    make: async (agent) => new ScriptedDriver(agent.memory, scriptOf, agent.models),
    model: false,
    chatTools: false,
    readsDatabase: true,
    stepped: (text, steps, delayMs, words) =>
      `${text} [[steps:${steps}]] [[delay:${delayMs}]] [[words:${words}]]`,
    midReply: 'text-delta',
  },
  {
    // The Claude Code binary (installed by pnpm), against the scripted Messages API: A1-A4.
    name: 'claude-code',
    make: async (agent) => {
      const setup = await claudeCodeSetup();
      return new ClaudeCodeDriver({
        configDir: setup.configDir,
        workspaceOf: async () => setup.workspace,
        baseUrl: setup.messages.baseUrl,
        apiKey: 'scripted',
        hasModel: (id) => agent.models.has(id),
        idleMs: 60_000,
        maxSessions: 8,
      });
    },
    model: true,
    // Its tools are the agent's own (Read, Bash, ...): claudeCodeDriver.test.ts checks them.
    chatTools: false,
    // The agent keeps its own session: a run starts without reading the conversation.
    readsDatabase: false,
    modelCallCut: () =>
      (claude?.messages.calls ?? []).some(
        (call) => JSON.stringify(call.body).includes(WATCHED) && call.closedEarly,
      ),
    // Its steps are tool calls: one step fewer than asked, as the first answer is a step too.
    stepped: (text, steps, delayMs, words) =>
      `${text}${steps > 1 ? ` [[steps:${steps - 1}]]` : ''} [[delay:${delayMs}]] [[words:${words}]]`,
    midReply: 'tool-input-available',
  },
];

/** The Claude Code case's scripted Messages API, workspace and config directory (one per file). */
let claude: { messages: MessagesApiServer; workspace: string; configDir: string } | undefined;
async function claudeCodeSetup() {
  if (!claude) {
    claude = {
      messages: await startMessagesApi(),
      workspace: await mkdtemp(join(tmpdir(), 'contract-workspace-')),
      configDir: await mkdtemp(join(tmpdir(), 'contract-claude-')),
    };
  }
  return claude;
}

/** Every run each driver made, by turn id: its events in order, and whether they ended. */
interface Run {
  events: DriverEvent[];
  ended: boolean;
}
const runs = new Map<string, Run[]>();

function recording(inner: RuntimeDriver): RuntimeDriver {
  return {
    send: async (turn) => {
      const connection = await inner.send(turn);
      const run: Run = { events: [], ended: false };
      runs.set(turn.turnId, [...(runs.get(turn.turnId) ?? []), run]);
      async function* events() {
        try {
          for await (const event of connection.events) {
            run.events.push(event);
            yield event;
          }
        } finally {
          run.ended = true;
        }
      }
      return { ...connection, events: events() };
    },
    ...(inner.summarize
      ? { summarize: (request) => (inner.summarize as NonNullable<RuntimeDriver['summarize']>)(request) }
      : {}),
    discard: (token) => inner.discard(token),
  };
}

const typesOf = (turnId: string) =>
  (runs.get(turnId) ?? []).flatMap((run) => run.events.map((event) => event.type));

/** Marks the model calls a test watches (Stop): their abort signals are kept. */
const WATCHED = 'watch this model call';
const watchedSignals: AbortSignal[] = [];

function watching(model: LanguageModelV4): LanguageModelV4 {
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v4',
      wrapStream: async ({ doStream, params }) => {
        if (promptText(params.prompt).includes(WATCHED) && params.abortSignal)
          watchedSignals.push(params.abortSignal);
        return await doStream();
      },
    },
  });
}

function promptText(prompt: LanguageModelV4Prompt): string {
  return JSON.stringify(prompt.filter((message) => message.role === 'user'));
}

let postgres: OwnedPostgres;
const apis = new Map<string, { api: TestApi; driver: RuntimeDriver }>();

beforeAll(async () => {
  // One database server of the file's own, so a case can take it away (and give it back).
  postgres = await OwnedPostgres.start();
  for (const driverCase of DRIVERS) {
    let driver: RuntimeDriver | undefined;
    const api = await startTestApi(
      postgres.databaseUrl,
      { CHAT_RUNTIME: driverCase.name === 'ai-sdk' ? 'ai-sdk' : 'mastra' },
      {
        wrapModel: watching,
        driver: async (agent, db) => {
          driver = await driverCase.make(agent, db);
          return recording(driver);
        },
      },
    );
    if (!driver) throw new Error('no driver');
    apis.set(driverCase.name, { api, driver });
  }
}, 180_000);

afterAll(async () => {
  for (const { api } of apis.values()) await api.close();
  await postgres?.dispose();
  await claude?.messages.close();
  for (const dir of [claude?.workspace, claude?.configDir])
    if (dir) await rm(dir, { recursive: true, force: true });
});

function steer(client: ApiClient, threadId: string, text: string) {
  return client.fetch('POST', `/api/threads/${threadId}/turns`, {
    clientRequestId: crypto.randomUUID(),
    text,
    mode: 'steer',
  });
}

function setTools(client: ApiClient, threadId: string, tools: Record<string, string>) {
  return client.json<Thread>('PATCH', `/api/threads/${threadId}`, { tools });
}

/** A turn of the driver's own, sent to it directly (no runner): the cases about a run's start. */
function directTurn(threadId: string, overrides: Partial<DriverTurn> = {}): DriverTurn {
  return {
    turnId: crypto.randomUUID(),
    conversation: { id: threadId, ownerId: 'contract-owner' },
    message: { id: crypto.randomUUID(), text: 'hello [[words:3]]', attachments: [] },
    instructions: { handoff: false, lateSteer: false },
    segment: { kind: 'start' },
    history: { messages: 0, summary: null },
    abortSignal: new AbortController().signal,
    takeSteers: async () => [],
    ...overrides,
  };
}

async function firstEvent(driver: RuntimeDriver, turn: DriverTurn): Promise<DriverEvent | undefined> {
  const connection = await driver.send(turn);
  const iterator = connection.events[Symbol.asyncIterator]();
  try {
    return (await iterator.next()).value as DriverEvent | undefined;
  } finally {
    connection.close();
  }
}

// A busy machine slows the agent's binary most (a process of its own per session): every case gets
// two minutes (a failing one fails sooner on its own assertions).
describe.each(DRIVERS)('the runtime driver contract: $name', { timeout: 120_000 }, (driverCase) => {
  /**
   * A case about the product's tools (approvals, live modes) or a summary: only a driver on the
   * product's model has them (the scripted driver has no model; the agent has tools of its own).
   */
  const withModel = (name: string, fn: () => Promise<void>, timeoutMs?: number) => {
    if (driverCase.chatTools) it(name, fn, timeoutMs);
  };
  let api: TestApi;
  let driver: RuntimeDriver;
  let client: ApiClient;

  beforeAll(async () => {
    const started = apis.get(driverCase.name);
    if (!started) throw new Error('not started');
    ({ api, driver } = started);
    client = await api.client();
  });

  it('streams a reply: resume token first, chunks, usage, turn-complete; the token is kept on the turn', async () => {
    const threadId = await client.createThread();
    const { turnId, chunks } = await client.sendAndRead(threadId, 'hello there [[words:5]]');
    const types = typesOf(turnId);
    expect(types[0]).toBe('resume-token');
    expect(types.at(-1)).toBe('turn-complete');
    expect(types).toContain('chunk');
    if (driverCase.model) {
      expect(types.at(-2)).toBe('usage');
      const usage = runs.get(turnId)?.[0]?.events.find((event) => event.type === 'usage');
      expect(usage).toMatchObject({
        usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
      });
      expect((usage as { usage: { outputTokens: number } }).usage.outputTokens).toBeGreaterThan(0);
    }
    const text = textOfChunks(chunks);
    expect(text.length).toBeGreaterThan(0);
    const detail = await untilIdle(client, threadId);
    expect(detail.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(textOfMessage(detail.messages[1])).toBe(text);
    expect((await turnRow(api, turnId))?.resumeToken).toMatch(/\S/);
  });

  it('keeps the resume token of a failed turn too; the run ends with error', async () => {
    const threadId = await client.createThread();
    const { turnId } = await client.sendAndRead(threadId, 'break [[fail]] [[words:5]]');
    const types = typesOf(turnId);
    expect(types[0]).toBe('resume-token');
    expect(types).toContain('error');
    expect(types).not.toContain('turn-complete');
    const row = await turnRow(api, turnId);
    expect(row?.status).toBe('failed');
    expect(row?.resumeToken).toMatch(/\S/);
  });

  it('takes a steer in at a step boundary: steer-boundary, the steer after the reply so far, the continuation', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, driverCase.stepped('plan my trip', 3, 150, 12));
    const stream = iterateChunks(reply);
    await readChunksUntil(stream, (chunk) => chunk.type === driverCase.midReply);
    expect((await steer(client, threadId, 'also book a hotel')).status).toBe(202);
    const after = await readRest(stream);
    const turnId = reply.headers.get('x-turn-id') ?? '';
    expect(typesOf(turnId)).toContain('steer-boundary');
    const boundary = after.find((chunk) => chunk.type === 'data-steer-boundary');
    expect(boundary).toBeDefined();
    if (driverCase.model) {
      expect(textOfChunks(after.slice(after.indexOf(boundary as StreamChunk)))).toMatch(
        /^\(steered\) You added: "also book a hotel"\. You said: "plan my trip"\./,
      );
    }
    const { messages } = await untilIdle(client, threadId);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(textOfMessage(messages[2])).toBe('also book a hotel');
  });

  it('hands back a steer that finds no boundary: it is queued first and runs as a turn of its own', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, driverCase.stepped('one step', 1, 40, 30));
    const stream = iterateChunks(reply);
    await readChunksUntil(stream, (chunk) => chunk.type === 'text-delta');
    const queued = await client.queued(threadId, 'an ordinary follow-up [[words:4]]');
    const sent = await steer(client, threadId, 'shorter please [[words:6]]');
    const { turn } = (await sent.json()) as { turn: { id: string } };
    const rest = await readRest(stream);
    expect(rest.some((chunk) => chunk.type === 'data-steer-boundary')).toBe(false);
    const queue = await waitFor(
      () => client.turnQueue(threadId),
      (read) => read.activeTurn === null && read.items[0]?.status === 'queued',
      30_000,
    );
    expect(queue?.items.map((item) => item.id)).toEqual([turn.id, queued.id]);
    const claim = await client.fetch('POST', `/api/threads/${threadId}/queue/claim`);
    expect(claim.headers.get('x-turn-id')).toBe(turn.id);
    const claimed = textOfChunks(await readChunks(claim));
    if (driverCase.model) expect(claimed).toMatch(/^\(steered\) You said: "shorter please"\./);
  });

  withModel(
    'suspends on a tool call that asks, and resumes with approve: the tool runs, the reply goes on',
    async () => {
      const threadId = await client.createThread();
      const { turnId } = await client.sendAndRead(
        threadId,
        'water the plants [[tool:save_note]] [[words:6]]',
      );
      expect(typesOf(turnId)).toContain('suspended');
      const detail = await client.detail(threadId);
      expect(detail.turnQueue.activeTurn).toMatchObject({ id: turnId, status: 'awaiting_approval' });
      const [request] = detail.hitl;
      expect(request).toMatchObject({ status: 'pending', toolName: 'save_note', turnId });
      const approved = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, {
        decision: 'approve',
      });
      expect(approved.status).toBe(200);
      expect(textOfChunks(await readChunks(approved))).toContain('The tool save_note returned {"saved":true');
      const after = await untilIdle(client, threadId);
      expect(after.notes.map((note) => note.text)).toEqual(['water the plants']);
      expect((await turnRow(api, turnId))?.status).toBe('completed');
      expect(after.messages.map((message) => message.role).slice(0, 2)).toEqual(['user', 'assistant']);
    },
  );

  withModel('resumes with deny: the tool does not run, and the model reads that it was denied', async () => {
    const threadId = await client.createThread();
    const { turnId } = await client.sendAndRead(threadId, 'water the plants [[tool:save_note]] [[words:6]]');
    const [request] = (await client.detail(threadId)).hitl;
    const denied = await client.fetch('POST', `/api/threads/${threadId}/hitl/${request?.id}`, {
      decision: 'deny',
    });
    expect(denied.status).toBe(200);
    expect(textOfChunks(await readChunks(denied))).toContain('The tool save_note was denied');
    const after = await untilIdle(client, threadId);
    expect(after.notes).toEqual([]);
    expect(after.hitl).toMatchObject([{ status: 'denied' }]);
    expect((await turnRow(api, turnId))?.status).toBe('completed');
  });

  withModel('asks before a tool the chat says ask for', async () => {
    const threadId = await client.createThread();
    await setTools(client, threadId, { current_time: 'ask' });
    const { turnId } = await client.sendAndRead(threadId, 'time? [[tool:current_time]] [[words:6]]');
    expect(typesOf(turnId)).toContain('suspended');
    expect((await client.detail(threadId)).hitl).toEqual([
      expect.objectContaining({ toolName: 'current_time', status: 'pending' }),
    ]);
  });

  withModel('does not offer a tool switched off mid-reply at the next step', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, 'walk [[steps:3]] [[delay:1000]] [[words:8]]');
    const stream = iterateChunks(reply);
    const before = await readChunksUntil(stream, (chunk) => chunk.type === 'tool-output-available');
    expect((await setTools(client, threadId, { current_time: 'off' })).status).toBe(200);
    const after = await readRest(stream);
    const ran = [...before, ...after].filter((chunk) => chunk.type === 'tool-output-available');
    expect(ran).toHaveLength(1);
    expect(textOfChunks(after)).toContain('I have no tool named current_time.');
  });

  it('aborts the model call on Stop', async () => {
    const threadId = await client.createThread();
    const reply = await client.send(threadId, `${WATCHED} [[words:400]] [[delay:30]]`);
    const turnId = reply.headers.get('x-turn-id') ?? '';
    const stream = iterateChunks(reply);
    await readChunksUntil(stream, (chunk) => chunk.type === 'text-delta');
    const signalsBefore = watchedSignals.length;
    const stopped = await client.json<{ turn: { status: string } }>(
      'POST',
      `/api/threads/${threadId}/interrupt`,
    );
    expect(stopped.body.turn.status).toBe('interrupted');
    await readRest(stream);
    // The run's events ended (the driver gave the run up), and the model call itself was aborted.
    await waitFor(async () => runs.get(turnId)?.every((run) => run.ended), Boolean, 30_000);
    expect(runs.get(turnId)?.every((run) => run.ended)).toBe(true);
    if (driverCase.modelCallCut) {
      await waitFor(async () => driverCase.modelCallCut?.(), Boolean, 30_000);
      expect(driverCase.modelCallCut()).toBe(true);
    } else if (driverCase.model) {
      expect(signalsBefore).toBeGreaterThan(0);
      expect(watchedSignals.at(-1)?.aborted).toBe(true);
    }
  });

  withModel('summarizes messages for a compaction', async () => {
    const summary = await driver.summarize?.({
      previousSummary: null,
      messages: [
        { role: 'user', text: 'We plan a trip to Lisbon in May.' },
        { role: 'assistant', text: 'Lisbon in May is warm; book early.' },
      ],
      abortSignal: new AbortController().signal,
    });
    expect(summary).toMatch(/\S/);
  });

  it('fails a run whose model is no longer configured, with an error as its first event', async () => {
    const threadId = await client.createThread();
    const event = await firstEvent(driver, directTurn(threadId, { model: 'no-longer-configured' }));
    expect(event?.type).toBe('error');
    // The driver's error is worded already (M2): the person reads which model went away.
    const failure = event?.type === 'error' ? event.error : undefined;
    expect(failure).toBeInstanceOf(WordedFailure);
    expect((failure as Error).message).toBe(turnErrorMessages.modelRemoved('no-longer-configured'));
  });

  // A driver that reads nothing as a run starts (the agent keeps its own session) has no such case.
  const readingTheDatabase = driverCase.readsDatabase ? it : () => undefined;
  readingTheDatabase(
    'starts a run during a database outage as unavailable, its first event',
    {
      timeout: 120_000,
    },
    async () => {
      const threadId = await client.createThread();
      // A conversation with history: a driver that reads its window reads it first.
      await client.sendAndRead(threadId, 'something to remember [[words:3]]');
      const memoryThreadId = (
        await postgres.query(
          (sql) =>
            sql<{ id: string }[]>`select memory_thread_id as id from branches where thread_id = ${threadId}`,
        )
      )[0]?.id;
      await postgres.stop();
      try {
        const event = await firstEvent(
          driver,
          directTurn(memoryThreadId ?? threadId, { history: { messages: 2, summary: null } }),
        );
        expect(event?.type).toBe('unavailable');
      } finally {
        await postgres.resume();
      }
      // Back: the API answers again once the database is.
      await waitFor(
        () => client.createThread().catch(() => undefined),
        (id) => id !== undefined,
        60_000,
      );
      // The outage opened every API's circuit (they share the server): each is asked whether it is
      // ready, which closes its circuit at once, so the next driver's cases do not start on a 503.
      for (const { api: other } of apis.values()) {
        const ready = await waitFor(
          () => fetch(`${other.baseUrl}/api/ready`).then((response) => response.status),
          (status) => status === 200,
          60_000,
        );
        expect(ready).toBe(200);
      }
    },
  );
});

describe('a chat written by one driver reads and continues in the other', () => {
  const pairs: Array<[RuntimeName, RuntimeName]> = [
    ['mastra', 'ai-sdk'],
    ['ai-sdk', 'mastra'],
  ];
  it.each(pairs)('written by %s, continued by %s', async (writer, reader) => {
    const first = apis.get(writer)?.api;
    const second = apis.get(reader)?.api;
    if (!first || !second) throw new Error('not started');
    const client = await first.client();
    const threadId = await client.createThread();
    await client.sendAndRead(threadId, 'what time is it [[tool:current_time]] [[words:4]]');
    await client.sendAndRead(threadId, 'plan my trip [[words:4]]');
    const written = await untilIdle(client, threadId);

    const other = client.via(second.baseUrl);
    // The other driver reads the same transcript, tool call and all, as it was written.
    expect((await other.detail(threadId)).messages).toEqual(written.messages);
    const { chunks } = await other.sendAndRead(threadId, 'what did I say? [[history]] [[words:5]]');
    expect(textOfChunks(chunks)).toContain(
      'History: "what time is it" | "plan my trip" You said: "what did I say?"',
    );
    // And what the second driver wrote reads back in the first.
    const after = await untilIdle(client, threadId);
    expect(after.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(JSON.stringify(after.messages[1]?.parts)).toContain('current_time');
    const again = await client.sendAndRead(threadId, 'and now? [[history]] [[words:5]]');
    expect(textOfChunks(again.chunks)).toContain(
      'History: "what time is it" | "plan my trip" | "what did I say?" You said: "and now?"',
    );
  });
});
