import type { ToolMode, ToolServer, ToolSetting } from '@chat/contracts';

export interface CatalogTool {
  name: string;
  description: string;
  defaultMode: ToolMode;
  /** T3: the MCP server the tool comes from; absent for a built-in tool. */
  server?: string;
}

/** Tools that come and go while the API runs (T3: the available MCP servers' tools). */
export interface ToolSource {
  tools(): CatalogTool[];
  servers(): ToolServer[];
}

/**
 * Every tool the agent has now, with its default mode (T1): the one home of what a chat's settings
 * may name and of what a chat that changed nothing does. The built-in tools are always there; an
 * MCP server's tools only while the server is available (T3).
 */
export class ToolCatalog {
  constructor(
    private readonly builtIn: CatalogTool[],
    private readonly source?: ToolSource,
  ) {}

  get tools(): CatalogTool[] {
    return this.source ? [...this.builtIn, ...this.source.tools()] : this.builtIn;
  }

  has(name: string): boolean {
    return this.tools.some((tool) => tool.name === name);
  }

  /** Each tool's mode in a chat that changed `changed` (names no longer offered are ignored). */
  modes(changed: Record<string, ToolMode>): Record<string, ToolMode> {
    return Object.fromEntries(this.tools.map((tool) => [tool.name, changed[tool.name] ?? tool.defaultMode]));
  }

  /** The settings panel's rows for a chat (the thread detail's `tools`). */
  settings(changed: Record<string, ToolMode>): ToolSetting[] {
    return this.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      mode: changed[tool.name] ?? tool.defaultMode,
      defaultMode: tool.defaultMode,
      ...(tool.server ? { server: tool.server } : {}),
    }));
  }

  /** T3: the configured MCP servers and whether their tools are offered now (the detail's `toolServers`). */
  servers(): ToolServer[] {
    return this.source?.servers() ?? [];
  }
}
