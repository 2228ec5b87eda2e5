import type { ToolMode } from '@chat/contracts';
import { RequestContext } from '@mastra/core/request-context';
import { createTool } from '@mastra/core/tools';
import { LiveToolPolicy, TOOL_OFF_REASON } from '../../../../agent/toolPolicy';
import { BUILT_IN_TOOL_DEFAULTS, type ChatTool } from '../../../../agent/tools';

/**
 * The chat's tools as Mastra tools: each call asks first or runs by the chat's setting for the
 * tool, read when the call is made (Mastra suspends the run for an approval), and refuses when the
 * tool was switched off after the model was offered it (T1, T2). The run's settings travel to the
 * tools in Mastra's request context.
 */

/** Where a run's policy travels to its tools (Mastra hands tools the request context's entries). */
const TOOL_POLICY_KEY = 'chat.toolPolicy';

export function toolPolicyContext(policy: LiveToolPolicy): RequestContext {
  return new RequestContext([[TOOL_POLICY_KEY, policy]]);
}

/** The run's policy, if the run carries one (a run resumed from a stored snapshot may not). */
export function policyIn(requestContext: unknown): LiveToolPolicy | undefined {
  const value =
    requestContext instanceof RequestContext
      ? requestContext.get(TOOL_POLICY_KEY)
      : (requestContext as Record<string, unknown> | undefined)?.[TOOL_POLICY_KEY];
  return value instanceof LiveToolPolicy ? value : undefined;
}

/**
 * The approval rule of a tool: ask unless the chat allows it. The settings are read again first,
 * so a change made while the reply runs decides this call.
 */
export function approvalBy(name: string, defaultMode: ToolMode | undefined) {
  return async (_input: unknown, context?: { requestContext?: Record<string, unknown> }) => {
    const policy = policyIn(context?.requestContext);
    if (!policy) return defaultMode !== 'allow';
    await policy.refresh();
    return policy.modeOf(name) === 'ask';
  };
}

/** Refuses a call of a tool switched off after the model was offered it (closed by default). */
export function assertNotOff(name: string, requestContext: unknown): void {
  const policy = policyIn(requestContext);
  if (policy && policy.modeOf(name) === 'off') throw new Error(TOOL_OFF_REASON);
}

/** The built-in tools (agent/tools.ts) as the Mastra agent has them, by id. */
export function createChatTools(
  builtIn: readonly ChatTool[],
  defaults: Record<string, ToolMode> = BUILT_IN_TOOL_DEFAULTS,
) {
  return Object.fromEntries(
    builtIn.map((tool) => [
      tool.id,
      createTool({
        id: tool.id,
        description: tool.description,
        inputSchema: tool.inputSchema,
        requireApproval: approvalBy(tool.id, defaults[tool.id]),
        execute: async (input, context) => {
          assertNotOff(tool.id, context?.requestContext);
          return await tool.execute(input as never, { memoryThreadId: context?.agent?.threadId });
        },
      }),
    ]),
  );
}
