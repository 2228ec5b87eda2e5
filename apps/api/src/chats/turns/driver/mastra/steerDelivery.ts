import { STEER_BOUNDARY_PART } from '@chat/contracts';
import type { ProcessInputStepArgs, Processor } from '@mastra/core/processors';
import { readSteerReminder, steerReminder } from '../../../../agent/steerReminder';
import type { SteerMessage } from '../types';

/**
 * Mastra's step hook, the Mastra driver's way to steer: before each model call after the first (a
 * step boundary: after a tool result), it asks the host for the steers to take in now
 * (`takeSteers`, which records them delivered), closes the reply so far as one assistant message
 * (Mastra rotates the response message id), adds each steer as a user message after it (stored in
 * memory in place), and marks the boundary in the stream. The model sees them with the hidden
 * steer reminder, a system message for this run only.
 */
export class SteerDelivery implements Processor<'steer-delivery'> {
  readonly id = 'steer-delivery';
  readonly name = 'Steer delivery';
  private readonly delivered: SteerMessage[] = [];
  private open = true;

  constructor(
    private readonly memory: { threadId: string; resourceId: string },
    private readonly takeSteers: () => Promise<SteerMessage[]>,
  ) {}

  /** Ends delivery: the run is over, nothing more is taken in. */
  close(): void {
    this.open = false;
  }

  async processInputStep(args: ProcessInputStepArgs) {
    const { stepNumber, messageList, rotateResponseMessageId, writer } = args;
    // Step 0 is the turn's first model call: nothing has been said yet, nothing to steer.
    const steers = this.open && stepNumber > 0 && rotateResponseMessageId ? await this.takeSteers() : [];
    if (steers.length > 0 && rotateResponseMessageId) {
      const continuationMessageId = rotateResponseMessageId();
      for (const steer of steers) {
        messageList.add(
          {
            id: steer.messageId,
            role: 'user',
            createdAt: new Date(),
            threadId: this.memory.threadId,
            resourceId: this.memory.resourceId,
            content: { format: 2, parts: [{ type: 'text', text: steer.text }] },
          },
          'input',
        );
      }
      this.delivered.push(...steers);
      // Transient: Mastra streams it but does not store it in the continuation message.
      await writer?.custom({
        type: STEER_BOUNDARY_PART,
        data: { steers, continuationMessageId },
        transient: true,
      });
    }
    if (this.delivered.length === 0) return undefined;
    // Keep exactly one reminder, naming every steer this run took in, on each later step too.
    const systemMessages = args.systemMessages.filter(
      (message) => typeof message.content !== 'string' || readSteerReminder(message.content) === undefined,
    );
    systemMessages.push({
      role: 'system',
      content: steerReminder(this.delivered.map((steer) => steer.text)),
    });
    return { systemMessages };
  }
}
