import { turnErrorMessages } from '@chat/contracts';
import type { Database } from '@chat/db';
import { CHAT_INSTRUCTIONS } from '../../../agent/chatInstructions';
import type { Config } from '../../../platform/config';
import { WordedFailure } from '../../../platform/errors';
import { transcriptTables } from '../../transcript/tables';
import { AiSdkDriver } from './aiSdk/aiSdkDriver';
import { builtInToolsForStreamText } from './aiSdk/chatTools';
import { mcpToolsForStreamText } from './mastra/aiSdkTools';
import type { ChatAgent } from './mastra/chatAgent';
import { MastraDriver } from './mastra/mastraDriver';
import type { DriverEvent, RuntimeDriver } from './types';

/** The runtime names `CHAT_RUNTIME` takes (their one list is the configuration's). */
export type RuntimeName = Config['CHAT_RUNTIME'];

/** The driver a deployment's turns run through (`CHAT_RUNTIME`), over the one chat agent's parts. */
export async function driverFor(
  name: RuntimeName,
  chatAgent: ChatAgent,
  db: Database,
): Promise<RuntimeDriver> {
  if (name === 'mastra') return await MastraDriver.create(chatAgent);
  return new AiSdkDriver({
    instructions: CHAT_INSTRUCTIONS,
    models: chatAgent.models,
    defaultModes: () => chatAgent.tools.modes({}),
    // The built-in tools wrapped for `streamText` here, not through the agent; the MCP servers'
    // tools still come through `@mastra/mcp`'s client.
    tools: async (run) => ({
      ...builtInToolsForStreamText(chatAgent.builtInTools, run),
      ...mcpToolsForStreamText(chatAgent.mcpTools(), run),
    }),
    window: (conversationId, messages) => transcriptTables.readNewestMessages(db, conversationId, messages),
  });
}

/**
 * A1: the driver of a deployment with agent chats: an agent chat's turns (they carry its
 * workspace) go to the agent's driver, every other turn to the chat's. A summary is the chat
 * model's; the agent compacts its own session.
 */
export function withAgentChats(chat: RuntimeDriver, agent: RuntimeDriver): RuntimeDriver {
  return {
    send: (turn) => (turn.workspace ? agent.send(turn) : chat.send(turn)),
    ...(chat.summarize ? { summarize: chat.summarize.bind(chat) } : {}),
    discard: (token) => chat.discard(token),
    close: async () => {
      await Promise.all([chat.close?.(), agent.close?.()]);
    },
  };
}

/**
 * The agent side of a deployment without agent chats (no workspace configured): an agent chat made
 * while they were on fails its turns in words that say why, never runs on the chat model instead.
 */
export const agentChatsOff: RuntimeDriver = {
  send: async () => ({
    events: (async function* (): AsyncGenerator<DriverEvent> {
      yield { type: 'error', error: new WordedFailure(turnErrorMessages.agentWorkspaceGone) };
    })(),
    steerable: false,
    close: () => undefined,
  }),
  discard: async () => undefined,
};
