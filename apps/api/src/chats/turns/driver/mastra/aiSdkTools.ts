import { RequestContext } from '@mastra/core/request-context';
import type { Tool } from '@mastra/core/tools';
import { type FlexibleSchema, jsonSchema, type ToolSet, tool } from 'ai';
import { type ToolRun, wrappedOnce } from '../aiSdk/chatTools';
import { toolPolicyContext } from './chatTools';

/**
 * The MCP servers' tools of now (T3) as AI SDK tools, for a driver that calls the model with
 * `streamText`: the same tools with the same guards (a tool switched off refuses, T2) and results,
 * each call run with the run's live tool settings. Their calls still go through `@mastra/mcp`'s
 * client (McpServers), which is why this wrapping lives here; the built-in tools need no Mastra
 * (driver/aiSdk/chatTools.ts). Whether a call asks first is the driver's (it reads the same
 * settings before each call), so no approval rule of Mastra's runs here.
 */
export function mcpToolsForStreamText(tools: Record<string, Tool>, run: ToolRun): ToolSet {
  const requestContext = run.policy ? toolPolicyContext(run.policy) : new RequestContext();
  const set: ToolSet = {};
  for (const [name, mcpTool] of Object.entries(tools)) {
    const execute = mcpTool.execute;
    if (!execute) continue;
    set[name] = tool({
      description: mcpTool.description ?? '',
      inputSchema: schemaOf(mcpTool.inputSchema),
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

/**
 * A Mastra tool's input schema as the AI SDK takes it: a standard schema wrapped once
 * (`wrappedOnce`), or plain JSON Schema.
 */
function schemaOf(schema: unknown): FlexibleSchema<unknown> {
  if (schema && typeof schema === 'object' && '~standard' in schema)
    return wrappedOnce(schema as FlexibleSchema<unknown>);
  return jsonSchema((schema as object | undefined) ?? { type: 'object', properties: {} });
}
