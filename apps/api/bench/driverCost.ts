/**
 * What one run of a short turn costs inside the API process, by way of running the model: the
 * Mastra driver as the API runs it (its agent, memory recall and save, step hooks, UI stream),
 * beside a prototype that runs the same model with AI SDK `streamText` directly over the same
 * memory (recall before, save after) and the same tools. Everything else of a turn (HTTP, the
 * send and settle transactions) is left out, so the difference is what the driver costs.
 *
 * Process CPU time and wall time per run, in alternating rounds after a warm-up; the database is a
 * child process, so its CPU is not counted. Not a test and not part of `pnpm bench`: a measurement
 * for the decision between drivers (ADR-032). Run it alone on a quiet machine:
 *
 *   cd apps/api && npx -y pnpm@12.4.2 run bench:driver            # TURNS=200 ROUNDS=3 by default
 */
import { createTestDatabase, startTestServer } from '@chat/db/testing';
import type { MastraDBMessage } from '@mastra/core/agent';
import { convertToModelMessages, stepCountIs, streamText, type ToolSet, tool, type UIMessage } from 'ai';
import { CHAT_INSTRUCTIONS, createChatAgent } from '../src/agent/chatAgent';
import { ModelRegistry } from '../src/agent/models';
import { toUIMessages } from '../src/chats/branches/uiMessages';
import { MastraDriver } from '../src/chats/turns/driver/mastra/mastraDriver';
import type { DriverTurn } from '../src/chats/turns/driver/types';

/** The benchmark's short turn: a five-word reply, no pacing. */
const TEXT = 'How are you today? [[words:5]] [[delay:0]]';
const TURNS = Number(process.env.TURNS ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** A thread takes this many turns, so a run is one of a short chat's first few (as in `pnpm bench`). */
const TURNS_PER_THREAD = 5;
const OWNER = 'driver-cost';

const server = await startTestServer();
const database = await createTestDatabase(server.adminUrl);
const models = new ModelRegistry([{ kind: 'local', id: 'local', label: 'Local', contextWindow: 128_000 }], {
  localModelDelayMs: 0,
});
const chat = await createChatAgent({
  databaseUrl: database.url,
  models,
  startupLock: (work) => work(),
  tools: { saveNote: async () => null },
});
const driver = await MastraDriver.create(chat);
const model = models.defaultModel();

/** The agent's tools as AI SDK tools, made once: the same names, descriptions and schemas. */
const agentTools = (await chat.agent.listTools()) as Record<
  string,
  { description?: string; inputSchema?: unknown; execute?: (input: unknown, context: unknown) => unknown }
>;
const tools: ToolSet = Object.fromEntries(
  Object.entries(agentTools).map(([name, agentTool]) => [
    name,
    tool({
      description: agentTool.description ?? '',
      inputSchema: agentTool.inputSchema as never,
      execute: async (input: unknown) => await agentTool.execute?.(input, {}),
    }),
  ]),
);

let threads = 0;
async function newThread(): Promise<string> {
  const id = `driver-cost-${threads++}`;
  await chat.memory.saveThread({
    thread: { id, resourceId: OWNER, title: '', createdAt: new Date(), updatedAt: new Date(), metadata: {} },
  });
  return id;
}

function turnOf(threadId: string): DriverTurn {
  return {
    turnId: crypto.randomUUID(),
    conversation: { id: threadId, ownerId: OWNER },
    message: { id: crypto.randomUUID(), text: TEXT, attachments: [] },
    instructions: { handoff: false, lateSteer: false },
    model: models.defaultId,
    segment: { kind: 'start' },
    history: { messages: 40, summary: null },
    abortSignal: new AbortController().signal,
    takeSteers: async () => [],
    toolModes: async () => ({}),
  };
}

/** One run through the driver the API uses. */
async function mastraRun(threadId: string): Promise<void> {
  const connection = await driver.send(turnOf(threadId));
  for await (const event of connection.events) {
    if (event.type === 'error') throw event.error;
  }
}

/** One run of the prototype: recall, `streamText` with a step hook, the UI stream, save. */
async function streamTextRun(threadId: string): Promise<void> {
  const input = turnOf(threadId);
  const { messages: recalled } = await chat.memory.recall({
    threadId,
    resourceId: OWNER,
    perPage: input.history.messages,
  });
  const user: UIMessage = { id: input.message.id, role: 'user', parts: [{ type: 'text', text: TEXT }] };
  const result = streamText({
    model,
    system: CHAT_INSTRUCTIONS,
    messages: await convertToModelMessages([...(toUIMessages(recalled) as UIMessage[]), user]),
    tools,
    stopWhen: stepCountIs(25),
    abortSignal: input.abortSignal,
    // What the Mastra driver's step hooks do at each step: steers, then the chat's tool settings.
    prepareStep: async ({ stepNumber }) => {
      if (stepNumber > 0) await input.takeSteers();
      await input.toolModes?.();
      return { activeTools: Object.keys(tools) };
    },
  });
  const replyId = crypto.randomUUID();
  let text = '';
  for await (const chunk of result.toUIMessageStream({ generateMessageId: () => replyId })) {
    if (chunk.type === 'text-delta') text += chunk.delta;
  }
  await result.totalUsage;
  const at = Date.now();
  const stored = (id: string, role: 'user' | 'assistant', body: string, offset: number): MastraDBMessage => ({
    id,
    role,
    createdAt: new Date(at + offset),
    threadId,
    resourceId: OWNER,
    content: { format: 2, parts: [{ type: 'text', text: body }] },
  });
  await chat.memory.saveMessages({
    messages: [stored(input.message.id, 'user', TEXT, 0), stored(replyId, 'assistant', text, 1)],
  });
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** CPU and wall milliseconds per run over `turns` runs, one after another. */
async function measure(run: (threadId: string) => Promise<void>, turns: number) {
  const threadIds: string[] = [];
  for (let index = 0; index < Math.ceil(turns / TURNS_PER_THREAD); index++) threadIds.push(await newThread());
  const cpu = cpuMs();
  const wall = performance.now();
  for (let index = 0; index < turns; index++) {
    await run(threadIds[Math.floor(index / TURNS_PER_THREAD)] as string);
  }
  return { cpu: (cpuMs() - cpu) / turns, wall: (performance.now() - wall) / turns };
}

const drivers = { mastra: mastraRun, streamText: streamTextRun };
try {
  for (const run of Object.values(drivers)) await measure(run, 50);
  console.log('| round | driver | CPU per run | wall time per run |\n|---|---|---|---|');
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, run] of Object.entries(drivers)) {
      const { cpu, wall } = await measure(run, TURNS);
      console.log(`| ${round} | ${name} | ${cpu.toFixed(2)} ms | ${wall.toFixed(2)} ms |`);
    }
  }
} finally {
  await chat.close();
  await database.drop();
  await server.stop();
}
