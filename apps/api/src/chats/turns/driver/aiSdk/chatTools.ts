import { asSchema, type FlexibleSchema, type ToolSet, tool } from 'ai';
import { type LiveToolPolicy, TOOL_OFF_REASON } from '../../../../agent/toolPolicy';
import type { ChatTool } from '../../../../agent/tools';

/** One run's side of its tools: the conversation a call writes to, and the chat's live settings. */
export interface ToolRun {
  /** The conversation's memory thread (`save_note` writes to the chat that owns it). */
  threadId: string;
  resourceId: string;
  /** The run's view of the chat's tool settings; absent, each tool follows its default. */
  policy?: LiveToolPolicy;
}

/**
 * The built-in tools (agent/tools.ts) as AI SDK tools for one `streamText` run: the same guards as
 * the Mastra agent's (a tool switched off after the model was offered it refuses, T2; the input is
 * checked against the tool's schema, also for a call resumed after an approval, which the driver
 * executes itself) and the same bounded results. Whether a call asks first is the driver's
 * (`toolApproval`, read before each call), so no approval rule is here.
 */
export function builtInToolsForStreamText(tools: readonly ChatTool[], run: ToolRun): ToolSet {
  const set: ToolSet = {};
  for (const chatTool of tools) {
    set[chatTool.id] = tool({
      description: chatTool.description,
      inputSchema: wrappedOnce(chatTool.inputSchema),
      execute: async (input: unknown) => {
        if (run.policy?.modeOf(chatTool.id) === 'off') throw new Error(TOOL_OFF_REASON);
        const parsed = chatTool.inputSchema.safeParse(input);
        if (!parsed.success) {
          throw new Error(
            `The input for ${chatTool.id} is not valid: ${parsed.error.issues[0]?.message ?? ''}`,
          );
        }
        return await chatTool.execute(parsed.data as never, { memoryThreadId: run.threadId });
      },
    });
  }
  return set;
}

/**
 * A tool's input schema wrapped for the AI SDK once per schema (`asSchema`), not per run: the AI
 * SDK converts a bare zod schema to JSON Schema again at every step of every run (`prepareTools`),
 * about 0.15 ms of CPU per short turn, while the wrapper computes it once and keeps it. A tool
 * whose schema changes (an MCP server's list of now) brings a new schema object, so it gets its
 * own entry.
 */
export function wrappedOnce(schema: FlexibleSchema<unknown>): FlexibleSchema<unknown> {
  let wrapped = wrappedSchemas.get(schema as object);
  if (!wrapped) {
    wrapped = asSchema(schema);
    wrappedSchemas.set(schema as object, wrapped);
  }
  return wrapped;
}

const wrappedSchemas = new WeakMap<object, FlexibleSchema<unknown>>();
