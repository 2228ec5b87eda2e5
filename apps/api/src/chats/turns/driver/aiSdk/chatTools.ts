import { type ToolSet, tool } from 'ai';
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
      inputSchema: chatTool.inputSchema,
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
