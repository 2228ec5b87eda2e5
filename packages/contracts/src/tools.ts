import { z } from 'zod';

/**
 * Per-chat tool settings (T1): what the agent may do with each tool in this chat. `off`: the tool
 * is not offered to the model; `ask`: each call waits for a person's approval (H3); `allow`: it
 * runs at once. The server's configuration gives each tool its default; a chat stores only what
 * its owner changed.
 */
export const toolModes = ['off', 'ask', 'allow'] as const;
export type ToolMode = (typeof toolModes)[number];

/** One tool as a chat's settings panel shows it (the thread detail's `tools`). */
export interface ToolSetting {
  /** The name the model calls it by (`current_time`, `save_note`). */
  name: string;
  description: string;
  /** What this chat does with it now. */
  mode: ToolMode;
  /** What a chat does with it until its owner changes it (the server's configuration). */
  defaultMode: ToolMode;
}

/** A tool name as a chat's settings may name it. */
export const toolName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.-]+$/, 'must be a tool name');

/** `PATCH /api/threads/:id { tools }`: the tools to change, by name; the others keep their mode. */
export const toolModeChanges = z
  .record(toolName, z.enum(toolModes))
  .refine((changes) => Object.keys(changes).length > 0, 'names no tool')
  .refine((changes) => Object.keys(changes).length <= 200, 'names too many tools');
export type ToolModeChanges = z.infer<typeof toolModeChanges>;
