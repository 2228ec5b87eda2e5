import { MAX_TEXT_LENGTH, type ToolMode } from '@chat/contracts';
import { z } from 'zod';
import { boundToolResult } from './toolResult';

/**
 * The built-in tools (H3), framework-free: `current_time` reads the clock; `save_note` writes.
 * Whether a call runs at once, waits for a person's approval or is refused is the chat's setting
 * for the tool (T1), read when the call is made (T2); the runtime driver's wrapping applies it
 * (driver/mastra/chatTools.ts), and a run without settings (resumed from a stored snapshot)
 * follows the tool's default.
 */

/** What the model reads as the tool's result when the person denied the call. */
export const TOOL_DENIED_REASON = 'The person denied this tool call; it did not run.';
/** What the transcript keeps for a call whose turn was stopped before anyone decided. */
export const TOOL_CANCELLED_REASON = 'The tool call was cancelled: the turn was stopped before a decision.';

/** Each built-in tool's mode in a chat whose owner never changed it (overridable by `TOOL_DEFAULTS`). */
export const BUILT_IN_TOOL_DEFAULTS: Record<string, ToolMode> = { current_time: 'allow', save_note: 'ask' };

export interface ChatToolPorts {
  /** Stores a note on the chat that owns this memory thread (a branch's); null if that chat is gone. */
  saveNote(input: { memoryThreadId: string; text: string }): Promise<{ id: string } | null>;
}

/** One call of a tool: the conversation it runs in, when it runs in one. */
export interface ChatToolCall {
  memoryThreadId?: string;
}

/** A built-in tool as the chat defines it; a driver wraps it with the approval rule and off guard. */
export interface ChatTool {
  id: string;
  description: string;
  inputSchema: z.ZodType;
  /** Runs the call; throws with what the model reads when it cannot. Its result is bounded. */
  execute(input: never, call: ChatToolCall): Promise<unknown>;
}

export function builtInTools(ports: ChatToolPorts): ChatTool[] {
  const saveNoteInput = z.object({ text: z.string().trim().min(1).max(MAX_TEXT_LENGTH) });
  return [
    {
      id: 'current_time',
      description: "Returns the server's current date and time (ISO 8601, UTC).",
      inputSchema: z.object({}),
      execute: async () => boundToolResult({ now: new Date().toISOString() }),
    },
    {
      id: 'save_note',
      description: 'Saves a short note on this chat. A person approves each note before it is saved.',
      inputSchema: saveNoteInput,
      execute: async ({ text }: z.infer<typeof saveNoteInput>, call) => {
        if (!call.memoryThreadId) throw new Error('save_note runs only inside a chat.');
        const note = await ports.saveNote({ memoryThreadId: call.memoryThreadId, text });
        if (!note) throw new Error('This chat no longer exists.');
        return boundToolResult({ saved: true, noteId: note.id });
      },
    },
  ];
}
