import { MAX_TEXT_LENGTH, type ToolMode } from '@chat/contracts';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { policyIn, TOOL_OFF_REASON } from './toolPolicy';
import { boundToolResult } from './toolResult';

/**
 * The built-in tools (H3): `current_time` reads the clock; `save_note` writes. Whether a call runs
 * at once, waits for a person's approval (Mastra suspends the run) or is refused is the chat's
 * setting for the tool (T1), read when the call is made (T2); a run without settings (resumed from
 * a stored snapshot) follows the tool's default.
 */

/** What the model reads as the tool's result when the person denied the call. */
export const TOOL_DENIED_REASON = 'The person denied this tool call; it did not run.';
/** What the transcript keeps for a call whose turn was stopped before anyone decided. */
export const TOOL_CANCELLED_REASON = 'The tool call was cancelled: the turn was stopped before a decision.';

/** Each built-in tool's mode in a chat whose owner never changed it (overridable by `TOOL_DEFAULTS`). */
export const BUILT_IN_TOOL_DEFAULTS: Record<string, ToolMode> = { current_time: 'allow', save_note: 'ask' };

export interface ChatToolPorts {
  /** Stores a note on the chat that owns this Mastra memory thread; null if that chat is gone. */
  saveNote(input: { memoryThreadId: string; text: string }): Promise<{ id: string } | null>;
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

export function createChatTools(
  ports: ChatToolPorts,
  defaults: Record<string, ToolMode> = BUILT_IN_TOOL_DEFAULTS,
) {
  return {
    current_time: createTool({
      id: 'current_time',
      description: "Returns the server's current date and time (ISO 8601, UTC).",
      inputSchema: z.object({}),
      requireApproval: approvalBy('current_time', defaults.current_time),
      execute: async (_input, context) => {
        assertNotOff('current_time', context?.requestContext);
        return boundToolResult({ now: new Date().toISOString() });
      },
    }),
    save_note: createTool({
      id: 'save_note',
      description: 'Saves a short note on this chat. A person approves each note before it is saved.',
      inputSchema: z.object({ text: z.string().trim().min(1).max(MAX_TEXT_LENGTH) }),
      requireApproval: approvalBy('save_note', defaults.save_note),
      execute: async ({ text }, context) => {
        assertNotOff('save_note', context?.requestContext);
        const memoryThreadId = context?.agent?.threadId;
        if (!memoryThreadId) throw new Error('save_note runs only inside a chat.');
        const note = await ports.saveNote({ memoryThreadId, text });
        if (!note) throw new Error('This chat no longer exists.');
        return boundToolResult({ saved: true, noteId: note.id });
      },
    }),
  };
}
