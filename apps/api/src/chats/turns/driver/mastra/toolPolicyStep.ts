import type { ProcessInputStepArgs, Processor } from '@mastra/core/processors';
import type { LiveToolPolicy } from '../../../../agent/toolPolicy';

/**
 * Mastra's step hook for the chat's tool settings (T2): before each model call it reads the
 * settings again and offers the model only the tools that are not `off` (Mastra's `activeTools`
 * for the step). Whether a call asks is decided per call from the same policy (agent/tools.ts).
 */
export class ToolPolicyStep implements Processor<'tool-policy'> {
  readonly id = 'tool-policy';
  readonly name = 'Tool policy';

  constructor(private readonly policy: LiveToolPolicy) {}

  async processInputStep(args: ProcessInputStepArgs) {
    await this.policy.refresh();
    return { activeTools: this.policy.offered(Object.keys(args.tools ?? {})) };
  }
}
