import type { Database } from '@chat/db';
import { chatToolsForStreamText } from '../../../agent/aiSdkTools';
import { CHAT_INSTRUCTIONS, type ChatAgent } from '../../../agent/chatAgent';
import { readNewestMessages } from '../../../agent/memoryTables';
import { AiSdkDriver } from './aiSdk/aiSdkDriver';
import { MastraDriver } from './mastra/mastraDriver';
import type { RuntimeDriver } from './types';

/** The runtime names `CHAT_RUNTIME` takes. */
export type RuntimeName = 'mastra' | 'ai-sdk';

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
    tools: (run) => chatToolsForStreamText(chatAgent, run),
    window: (conversationId, messages) => readNewestMessages(db, conversationId, messages),
  });
}
