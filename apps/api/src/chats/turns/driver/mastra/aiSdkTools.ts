import { RequestContext } from '@mastra/core/request-context';
import type { Tool } from '@mastra/core/tools';
import { asSchema, type FlexibleSchema, jsonSchema, type ToolSet, tool } from 'ai';
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

/**
 * A Mastra tool's input schema as the AI SDK takes it (a standard schema, or plain JSON Schema).
 * A zod schema is wrapped once per schema (`asSchema`), not per run: the AI SDK converts a bare
 * one to JSON Schema again at every step of every run (`prepareTools`), about 0.15 ms of CPU per
 * short turn, while the wrapper computes it once and keeps it. A tool whose schema changes (an MCP
 * server's list of now) brings a new schema object, so it gets its own entry.
 */
function schemaOf(schema: unknown): FlexibleSchema<unknown> {
  if (schema && typeof schema === 'object' && '~standard' in schema) {
    let wrapped = wrappedSchemas.get(schema);
    if (!wrapped) {
      wrapped = asSchema(schema as FlexibleSchema<unknown>);
      wrappedSchemas.set(schema, wrapped);
    }
    return wrapped;
  }
  return jsonSchema((schema as object | undefined) ?? { type: 'object', properties: {} });
}

const wrappedSchemas = new WeakMap<object, FlexibleSchema<unknown>>();
