import type { ToolMode, ToolSetting } from '@chat/contracts';

export interface CatalogTool {
  name: string;
  description: string;
  defaultMode: ToolMode;
}

/**
 * Every tool the agent has, with its default mode (T1): the one home of what a chat's settings may
 * name and of what a chat that changed nothing does.
 */
export class ToolCatalog {
  private readonly byName: Map<string, CatalogTool>;

  constructor(readonly tools: CatalogTool[]) {
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
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
    }));
  }
}
