import { RequestContext } from '@mastra/core/request-context';
import type { Tool } from '@mastra/core/tools';
import { type FlexibleSchema, jsonSchema, type ToolSet, tool } from 'ai';
import type { LiveToolPolicy } from '../../../../agent/toolPolicy';
import type { ChatAgent } from './chatAgent';
import { toolPolicyContext } from './chatTools';

/**
 * The chat's tools (built-in and the MCP servers' of now, T3) as AI SDK tools, for a driver that
 * calls the model with `streamText`: the same tools with the same guards (a tool switched off
 * refuses, T2) and results, each call run with the chat's memory thread (`save_note` writes to
 * it) and the run's live tool settings. Whether a call asks first is the driver's (it reads the
 * same settings before each call), so no approval rule of Mastra's runs here.
 */
export async function chatToolsForStreamText(
  chatAgent: ChatAgent,
  run: { threadId: string; resourceId: string; policy?: LiveToolPolicy },
): Promise<ToolSet> {
  const tools = (await chatAgent.agent.listTools()) as Record<string, Tool>;
  const requestContext = run.policy ? toolPolicyContext(run.policy) : new RequestContext();
  const set: ToolSet = {};
  for (const [name, chatTool] of Object.entries(tools)) {
    const execute = chatTool.execute;
    if (!execute) continue;
    set[name] = tool({
      description: chatTool.description ?? '',
      inputSchema: schemaOf(chatTool.inputSchema),
      execute: async (input: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }) =>
        await execute(
          input as never,
          {
            requestContext,
            abortSignal: options.abortSignal,
            agent: {
              agentId: 'chat',
              toolCallId: options.toolCallId,
              messages: [],
              threadId: run.threadId,
              resourceId: run.resourceId,
              suspend: async () => {},
            },
          } as never,
        ),
    });
  }
  return set;
}

/** A Mastra tool's input schema as the AI SDK takes it (a standard schema, or plain JSON Schema). */
function schemaOf(schema: unknown): FlexibleSchema<unknown> {
  if (schema && typeof schema === 'object' && '~standard' in schema) return schema as FlexibleSchema<unknown>;
  return jsonSchema((schema as object | undefined) ?? { type: 'object', properties: {} });
}
