import { MAX_TEXT_LENGTH } from '@chat/contracts';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';

/**
 * The built-in tools (H3): `current_time` runs at once; `save_note` writes, so Mastra suspends the
 * run until a person approves or denies it (`requireApproval`).
 */

/** What the model reads as the tool's result when the person denied the call. */
export const TOOL_DENIED_REASON = 'The person denied this tool call; it did not run.';
/** What the transcript keeps for a call whose turn was stopped before anyone decided. */
export const TOOL_CANCELLED_REASON = 'The tool call was cancelled: the turn was stopped before a decision.';

export interface ChatToolPorts {
  /** Stores a note on the chat that owns this Mastra memory thread; null if that chat is gone. */
  saveNote(input: { memoryThreadId: string; text: string }): Promise<{ id: string } | null>;
}

export function createChatTools(ports: ChatToolPorts) {
  return {
    current_time: createTool({
      id: 'current_time',
      description: "Returns the server's current date and time (ISO 8601, UTC).",
      inputSchema: z.object({}),
      execute: async () => ({ now: new Date().toISOString() }),
    }),
    save_note: createTool({
      id: 'save_note',
      description: 'Saves a short note on this chat. A person approves each note before it is saved.',
      inputSchema: z.object({ text: z.string().trim().min(1).max(MAX_TEXT_LENGTH) }),
      requireApproval: true,
      execute: async ({ text }, context) => {
        const memoryThreadId = context?.agent?.threadId;
        if (!memoryThreadId) throw new Error('save_note runs only inside a chat.');
        const note = await ports.saveNote({ memoryThreadId, text });
        if (!note) throw new Error('This chat no longer exists.');
        return { saved: true, noteId: note.id };
      },
    }),
  };
}
