/**
 * What one run of a short turn costs inside the API process, by way of running the model: each
 * runtime driver as the API runs it (`CHAT_RUNTIME=mastra`: the Mastra agent with its memory recall
 * and save, step hooks and UI stream; `CHAT_RUNTIME=ai-sdk`: one AI SDK `streamText` over a bounded
 * window read and the same tools), each followed by what the runner does with every run's reply
 * before the turn is done (`ensureTurnStored`: a tail read, and the write of what memory lacks,
 * which for the AI SDK driver is the whole turn). Everything else of a turn (HTTP, the send and
 * settle transactions) is left out, so the difference is what the driver costs.
 *
 * Process CPU time and wall time per run, in alternating rounds after a warm-up; the database is a
 * child process, so its CPU is not counted. Not a test and not part of `pnpm bench`: a measurement
 * for the choice between drivers (ADR-032, ADR-034). Run it alone on a quiet machine:
 *
 *   cd apps/api && npx -y pnpm@12.4.2 run bench:driver            # TURNS=200 ROUNDS=3 by default
 */
import { createDatabase, createSql } from '@chat/db';
import { createTestDatabase, startTestServer } from '@chat/db/testing';
import { ModelRegistry } from '../src/agent/models';
import { ensureTurnStored } from '../src/chats/branches/transcript';
import { MastraTranscriptStore } from '../src/chats/transcript/mastra/mastraTranscript';
import { driverFor } from '../src/chats/turns/driver/choice';
import { createChatAgent } from '../src/chats/turns/driver/mastra/chatAgent';
import type { DriverTurn, RuntimeDriver } from '../src/chats/turns/driver/types';
import { ReplyRecord } from '../src/chats/turns/replyRecord';

/** The benchmark's short turn: a five-word reply, no pacing. */
const TEXT = 'How are you today? [[words:5]] [[delay:0]]';
const TURNS = Number(process.env.TURNS ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** A thread takes this many turns, so a run is one of a short chat's first few (as in `pnpm bench`). */
const TURNS_PER_THREAD = 5;
const OWNER = 'driver-cost';

const server = await startTestServer();
const database = await createTestDatabase(server.adminUrl);
const sql = createSql(database.url, { max: 4 });
const db = createDatabase(sql);
const models = new ModelRegistry([{ kind: 'local', id: 'local', label: 'Local', contextWindow: 128_000 }], {
  localModelDelayMs: 0,
});
const chat = await createChatAgent({
  databaseUrl: database.url,
  models,
  startupLock: (work) => work(),
  tools: { saveNote: async () => null },
});
const transcript = new MastraTranscriptStore(chat.memory, db);
const mastra = await driverFor('mastra', chat, db);
const aiSdk = await driverFor('ai-sdk', chat, db);

let threads = 0;
async function newThread(): Promise<string> {
  const id = `driver-cost-${threads++}`;
  await chat.memory.saveThread({
    thread: { id, resourceId: OWNER, title: '', createdAt: new Date(), updatedAt: new Date(), metadata: {} },
  });
  return id;
}

/** How many messages each thread holds so far: the window a run gets (all of a short chat). */
const stored = new Map<string, number>();

function turnOf(threadId: string): DriverTurn {
  return {
    turnId: crypto.randomUUID(),
    conversation: { id: threadId, ownerId: OWNER },
    message: { id: crypto.randomUUID(), text: TEXT, attachments: [] },
    instructions: { handoff: false, lateSteer: false },
    model: models.defaultId,
    segment: { kind: 'start' },
    history: { messages: stored.get(threadId) ?? 0, summary: null },
    abortSignal: new AbortController().signal,
    takeSteers: async () => [],
    toolModes: async () => ({}),
  };
}

/** One run through `driver`, then the runner's making sure of its messages in memory. */
async function runOn(driver: RuntimeDriver, threadId: string): Promise<void> {
  const input = turnOf(threadId);
  const reply = ReplyRecord.empty();
  const connection = await driver.send(input);
  for await (const event of connection.events) {
    if (event.type === 'error') throw event.error;
    if (event.type === 'chunk') reply.take(event.chunk);
  }
  await ensureTurnStored(transcript, db, {
    memoryThreadId: threadId,
    resourceId: OWNER,
    userMessage: { id: input.message.id, text: TEXT, createdAt: new Date() },
    messages: reply.all,
  });
  stored.set(threadId, (stored.get(threadId) ?? 0) + 2);
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

const drivers = {
  mastra: (threadId: string) => runOn(mastra, threadId),
  'ai-sdk': (threadId: string) => runOn(aiSdk, threadId),
};
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
  await sql.end();
  await database.drop();
  await server.stop();
}
