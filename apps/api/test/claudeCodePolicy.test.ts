import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolMode } from '@chat/contracts';
import { turnErrorMessages } from '@chat/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClaudeCodeDriver } from '../src/chats/turns/driver/claudeCode/claudeCodeDriver';
import type { DriverEvent, DriverTurn } from '../src/chats/turns/driver/types';
import { type MessagesApiServer, startMessagesApi } from './support/messagesApiServer';

/**
 * A5, failing closed: the Claude Code driver as the runner drives it (a run of a turn, its events
 * read to their end), the real binary against the scripted Messages API. A chat's tool settings
 * that cannot be read or applied while the agent works end its session and the run, in the
 * product's words: the agent never goes on under the settings it had.
 */

let server: MessagesApiServer;
let scratch: string;
let driver: ClaudeCodeDriver;

beforeAll(async () => {
  server = await startMessagesApi();
  scratch = await mkdtemp(join(tmpdir(), 'claude-policy-'));
  driver = new ClaudeCodeDriver({
    configDir: join(scratch, 'config'),
    workspaceOf: async () => scratch,
    baseUrl: server.baseUrl,
    apiKey: 'scripted',
    hasModel: () => true,
    idleMs: 60_000,
    maxSessions: 2,
  });
});

afterAll(async () => {
  await driver?.close();
  await server?.close();
  await rm(scratch, { recursive: true, force: true, maxRetries: 5 });
});

function turnOf(text: string, toolModes: () => Promise<Record<string, ToolMode>>): DriverTurn {
  return {
    turnId: crypto.randomUUID(),
    conversation: { id: crypto.randomUUID(), ownerId: 'someone' },
    message: { id: crypto.randomUUID(), text, attachments: [] },
    instructions: { handoff: false, lateSteer: false },
    segment: { kind: 'start' },
    history: { messages: 0, summary: null },
    abortSignal: new AbortController().signal,
    takeSteers: async () => [],
    toolModes,
  };
}

async function eventsOf(turn: DriverTurn): Promise<DriverEvent[]> {
  const connection = await driver.send(turn);
  const events: DriverEvent[] = [];
  for await (const event of connection.events) events.push(event);
  return events;
}

const outputs = (events: DriverEvent[]) =>
  events.flatMap((event) =>
    event.type === 'chunk' && event.chunk.type === 'tool-output-available' ? [event.chunk.output] : [],
  );

describe("an agent chat's tool settings fail closed (A5)", () => {
  it('settings that cannot be read at a tool call end the run before the call runs', async () => {
    let reads = 0;
    const events = await eventsOf(
      turnOf('write it [[tool:Write]] [[words:3]]', async () => {
        reads += 1;
        // Read as the run starts; away at the tool call.
        if (reads > 1) throw new Error('the database is away');
        return { Write: 'allow' };
      }),
    );
    expect(reads).toBe(2);
    expect(outputs(events)).toEqual([]);
    const failed = events.find((event) => event.type === 'error');
    expect(String((failed as { error: Error } | undefined)?.error.message)).toBe(
      turnErrorMessages.agentStopped,
    );
    expect(events.some((event) => event.type === 'turn-complete')).toBe(false);
    expect(existsSync(join(scratch, 'written.txt'))).toBe(false);
  }, 60_000);

  it('settings that cannot be read as a run starts start nothing', async () => {
    const before = server.calls.length;
    const events = await eventsOf(
      turnOf('hello [[words:2]]', async () => {
        throw new Error('the database is away');
      }),
    );
    expect(events.map((event) => event.type)).toEqual(['error']);
    expect(server.calls.length).toBe(before);
  }, 60_000);

  it('settings read at each tool call decide it: allowed, the call runs', async () => {
    const events = await eventsOf(turnOf('walk [[steps:2]] [[words:2]]', async () => ({ Bash: 'allow' })));
    expect(outputs(events)).toEqual(['step 1', 'step 2']);
    expect(events.at(-1)).toEqual({ type: 'turn-complete', saved: true });
  }, 60_000);
});
