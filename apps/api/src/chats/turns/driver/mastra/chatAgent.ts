import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ToolMode } from '@chat/contracts';
import type { HangWatch } from '@chat/db';
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { ConsoleLogger } from '@mastra/core/logger';
import type { Tool } from '@mastra/core/tools';
import type { Memory } from '@mastra/memory';
import type { PostgresStore } from '@mastra/pg';
import { CHAT_INSTRUCTIONS } from '../../../../agent/chatInstructions';
import type { ModelRegistry } from '../../../../agent/models';
import { ToolCatalog } from '../../../../agent/toolCatalog';
import {
  BUILT_IN_TOOL_DEFAULTS,
  builtInTools,
  type ChatTool,
  type ChatToolPorts,
} from '../../../../agent/tools';
import type { Logger } from '../../../../platform/logger';
import type { McpServerSpec } from '../../../../platform/mcpServerList';
import { openMastraMemory } from '../../../transcript/mastra/mastraMemory';
import { createChatTools } from './chatTools';
import { McpServers } from './mcp/mcpServers';

/**
 * The request-context key naming the model a call runs with (M2): the agent's model is resolved
 * per call from it, so one agent (one memory, one set of tools, one place approvals resume from)
 * serves every configured model.
 */
export const CHAT_MODEL_KEY = 'chat-model';

/**
 * The agent runs turns only through the Mastra runtime driver (this folder); its memory is the one
 * the transcript store is on (chats/transcript/mastra/), which the rest of the chat domain reads
 * through the store's interface.
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
  /**
   * The built-in tools as the chat defines them (agent/tools.ts), framework-free: a driver that
   * does not run this agent wraps them itself (driver/aiSdk/chatTools.ts).
   */
  builtInTools: readonly ChatTool[];
  /**
   * Every tool the MCP servers have listed (T3), as the agent has them (approval rule, off guard,
   * bounded result; their calls go through `@mastra/mcp`'s client); none without servers.
   */
  mcpTools(): Record<string, Tool>;
  close(): Promise<void>;
}

/**
 * The Mastra agent over the transcript's Mastra memory (mastraMemory.ts), with the chat's tools
 * (built-in and MCP) and every configured model.
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
  const { memory, storage, close: closeMemory } = await openMastraMemory(options);
  const { models } = options;
  const defaults = { ...BUILT_IN_TOOL_DEFAULTS, ...options.toolDefaults };
  const builtIn = builtInTools(options.tools);
  const tools = createChatTools(builtIn, defaults);
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
  new Mastra({ agents: { chat: agent }, storage, logger: new ConsoleLogger({ level: 'silent' }) });
  mcp?.start();
  return {
    agent,
    memory,
    storage,
    model: models.defaultModel(),
    models,
    builtInTools: builtIn,
    mcpTools: () => mcp?.agentTools() ?? {},
    tools: new ToolCatalog(
      Object.values(tools).map((tool) => ({
        name: tool.id,
        description: tool.description ?? '',
        defaultMode: defaults[tool.id] ?? 'ask',
      })),
      mcp ? { tools: () => mcp.catalogTools(), servers: () => mcp.statuses() } : undefined,
    ),
    close: async () => {
      await mcp?.close();
      await closeMemory();
    },
  };
}
