import type { ToolMode } from '@chat/contracts';

/**
 * A running reply's view of its chat's tool settings (T1, T2). The host reads the settings again
 * before each model call (the driver's step hook) and at each tool call, so a change made while
 * the reply runs reaches it at its next step. A read that fails leaves every tool off for the rest
 * of the run (closed by default).
 */
export class LiveToolPolicy {
  private modes: Record<string, ToolMode>;
  private failed = false;

  constructor(
    private readonly read: () => Promise<Record<string, ToolMode>>,
    initial: Record<string, ToolMode>,
  ) {
    this.modes = initial;
  }

  /** Reads the chat's settings now; after a failed read every tool stays off for this run. */
  async refresh(): Promise<void> {
    if (this.failed) return;
    try {
      this.modes = await this.read();
    } catch {
      this.failed = true;
    }
  }

  modeOf(name: string): ToolMode {
    if (this.failed) return 'off';
    return this.modes[name] ?? 'off';
  }

  /** Of `names`, the tools the model is offered now: every one not `off` (T2). */
  offered(names: string[]): string[] {
    return names.filter((name) => this.modeOf(name) !== 'off');
  }
}

/** What the model reads when it calls a tool the person switched off while the reply ran. */
export const TOOL_OFF_REASON =
  'The person switched this tool off for this chat; it did not run. The change applies from the next reply on.';
