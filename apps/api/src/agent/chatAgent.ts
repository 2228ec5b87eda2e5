import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ToolMode } from '@chat/contracts';
import { DATABASE_TIMEOUTS, type HangWatch } from '@chat/db';
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { ConsoleLogger } from '@mastra/core/logger';
import { Memory } from '@mastra/memory';
import { PostgresStore } from '@mastra/pg';
import pg from 'pg';
import type { Logger } from '../platform/logger';
import type { McpServerSpec } from '../platform/mcpServerList';
import { McpServers } from './mcp/mcpServers';
import type { ModelRegistry } from './models';
import { ToolCatalog } from './toolCatalog';
import { BUILT_IN_TOOL_DEFAULTS, type ChatToolPorts, createChatTools } from './tools';

/**
 * The request-context key naming the model a call runs with (M2): the agent's model is resolved
 * per call from it, so one agent (one memory, one set of tools, one place approvals resume from)
 * serves every configured model.
 */
export const CHAT_MODEL_KEY = 'chat-model';

export const CHAT_INSTRUCTIONS = [
  'You are a helpful, concise assistant in a web chat.',
  'People may send follow-up messages while you are still answering; those arrive as later turns.',
  'Use Markdown for structure and code blocks for code.',
].join(' ');

/**
 * The agent runs turns only through the Mastra runtime driver (chats/turns/driver/mastra/); the
 * memory is the transcript store every part of the chat domain reads.
 */
export interface ChatAgent {
  agent: Agent;
  memory: Memory;
  /** Mastra's storage (the driver keeps suspended runs' snapshots in its workflow store). */
  storage: PostgresStore;
  /** The default model, for the calls that are not turns (a compaction's summary, C3). */
  model: LanguageModelV4;
  /** The configured models (M1); a call names its own by `CHAT_MODEL_KEY`. */
  models: ModelRegistry;
  /** The tools the agent has, with each one's default mode (T1). */
  tools: ToolCatalog;
  close(): Promise<void>;
}

/**
 * The Mastra agent and its Postgres memory: the canonical store of every branch's executed
 * transcript (O1). Mastra's tables live in their own schema so drizzle-kit never sees them.
 */
export async function createChatAgent(options: {
  databaseUrl: string;
  /** The client-side deadline the pool's connections keep (the app's, `DatabaseHandle.watch`). */
  hangWatch?: HangWatch;
  models: ModelRegistry;
  /** Serialises schema creation with other instances starting at the same time. */
  startupLock: <T>(work: () => Promise<T>) => Promise<T>;
  /** What the built-in tools write through (the API's own tables). */
  tools: ChatToolPorts;
  /** `TOOL_DEFAULTS`: a tool's mode in a chat that never changed it, over the built-in defaults. */
  toolDefaults?: Record<string, ToolMode>;
  /** T3: `MCP_SERVERS`, connected in the background; their tools join while they are available. */
  mcpServers?: McpServerSpec[];
  /** Where an MCP server's coming and going is reported. */
  logger?: Logger;
}): Promise<ChatAgent> {
  // Schema changes run once at start on a store of their own, with no statement timeout: a new
  // index on a large table may take minutes. Requests then go through a pool whose connections and
  // statements are bounded like the app's own (`DATABASE_TIMEOUTS`), so an outage fails fast here too.
  const setup = new PostgresStore({
    id: 'chat-memory-setup',
    connectionString: options.databaseUrl,
    schemaName: 'mastra',
  });
  try {
    await options.startupLock(() => setup.init());
  } finally {
    await setup.close();
  }
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 10,
    connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs,
    statement_timeout: DATABASE_TIMEOUTS.statementMs,
    // The client's own bound, for a server that stopped answering without closing the connection.
    query_timeout: DATABASE_TIMEOUTS.statementMs + DATABASE_TIMEOUTS.connectMs,
    keepAlive: true,
    // A database that hangs: the same client-side deadline as the app's own connections.
    ...(options.hangWatch ? { stream: options.hangWatch.stream } : {}),
  });
  // An idle client whose connection breaks emits 'error' on the pool; unhandled, it would end the
  // process. The next query makes a new connection.
  pool.on('error', () => {});
  const storage = new PostgresStore({ id: 'chat-memory', pool, schemaName: 'mastra', disableInit: true });
  const memory = new Memory({
    storage,
    // No semantic recall or working memory. How much of a branch a turn recalls is decided per
    // call (the messages after the branch's context marker, C3: chats/turns/context/); this
    // default only bounds a recall that names no window.
    options: { lastMessages: 40, semanticRecall: false, generateTitle: false },
  });
  const { models } = options;
  const defaults = { ...BUILT_IN_TOOL_DEFAULTS, ...options.toolDefaults };
  const tools = createChatTools(options.tools, defaults);
  const mcp =
    options.mcpServers && options.mcpServers.length > 0 && options.logger
      ? new McpServers(options.mcpServers, {
          logger: options.logger,
          defaultModeOf: (name) => defaults[name] ?? 'ask',
        })
      : undefined;
  const agent = new Agent({
    id: 'chat',
    name: 'Chat',
    instructions: CHAT_INSTRUCTIONS,
    // The call's own model (M2); a call that names none (or one no longer configured, which the
    // driver refuses before calling) gets the default.
    model: ({ requestContext }) => {
      const id = requestContext.get(CHAT_MODEL_KEY);
      return (typeof id === 'string' ? models.model(id) : undefined) ?? models.defaultModel();
    },
    memory,
    // Resolved per run: the MCP tools are those the servers have listed so far (T3); which of all
    // these a step offers is the chat's policy (ToolPolicyStep).
    tools: mcp ? () => ({ ...tools, ...mcp.agentTools() }) : tools,
  });
  // Registering the agent gives it this logger, and the storage where a run suspended for a tool
  // approval keeps its snapshot (so any instance, or this one after a restart, can resume it).
  // Mastra's own console output stays quiet: the turn runner reports every failure in the API's
  // structured log instead.
  const quiet = new ConsoleLogger({ level: 'silent' });
  new Mastra({ agents: { chat: agent }, storage, logger: quiet });
  // The store's domains (memory, workflows, ...) keep loggers of their own, which print each
  // failed query to stderr outside the API's log during an outage; the failures reach the runner
  // as errors, and it logs them.
  for (const domain of Object.values(storage.stores ?? {})) domain?.__setLogger(quiet);
  mcp?.start();
  return {
    agent,
    memory,
    storage,
    model: models.defaultModel(),
    models,
    tools: new ToolCatalog(
      Object.values(tools).map((tool) => ({
        name: tool.id,
        description: tool.description ?? '',
        defaultMode: defaults[tool.id] ?? 'ask',
      })),
      mcp ? { tools: () => mcp.catalogTools(), servers: () => mcp.statuses() } : undefined,
    ),
    // The store does not end a pool it was given.
    close: async () => {
      await mcp?.close();
      await storage.close();
      await pool.end();
    },
  };
}
