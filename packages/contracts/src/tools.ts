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
  /** T3: the configured MCP server the tool comes from; absent for a built-in tool. */
  server?: string;
}

/**
 * T3: a configured MCP server as a chat's settings panel shows it (the thread detail's
 * `toolServers`). `starting`: not connected yet; `available`: its tools are offered; `unavailable`:
 * it failed to start or stopped answering, its tools are not offered, and the API tries it again
 * later. Never its command, URL, environment or headers.
 */
export const toolServerStatuses = ['starting', 'available', 'unavailable'] as const;
export type ToolServerStatus = (typeof toolServerStatuses)[number];

export interface ToolServer {
  name: string;
  status: ToolServerStatus;
}

/**
 * How an MCP server's tool is named for the model, the settings and the transcript:
 * `mcp__<server>__<tool>`. A built-in tool never starts with `mcp__`, and a server name has no `_`,
 * so no server's tool can take a built-in's name or another server's.
 */
export const MCP_TOOL_PREFIX = 'mcp__';
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server}__${tool}`;
}

/** An MCP tool's name taken apart (undefined for a built-in tool): the inverse of `mcpToolName`. */
export function mcpToolParts(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  // A server name has no `_`: the first `__` ends it.
  const end = rest.indexOf('__');
  if (end <= 0 || end + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, end), tool: rest.slice(end + 2) };
}

/**
 * A tool as a person reads its name: an MCP server's tool by its own name and its server's
 * (`echo from fixture`), a built-in tool by its name.
 */
export function toolLabel(name: string): string {
  const parts = mcpToolParts(name);
  return parts ? `${parts.tool} from ${parts.server}` : name;
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
