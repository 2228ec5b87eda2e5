import type { SteerBoundaryData } from '@chat/contracts';
import { toAISdkStream } from '@mastra/ai-sdk';
import type { UIMessageChunk } from 'ai';
import type { ChatAgent } from '../../../../agent/chatAgent';
import type { DriverEvent, DriverTurn, RuntimeConnection, RuntimeDriver } from '../types';
import { callModel } from './modelCall';
import { STEER_BOUNDARY_PART, SteerDelivery } from './steerDelivery';

/**
 * The first runtime driver: the Mastra agent with its Postgres memory. A started turn can be
 * steered (Mastra's step hook, SteerDelivery); a run resumed after a tool approval cannot (Mastra
 * resumes it from a stored snapshot, without per-call hooks), so steers sent then are queued. The
 * resume token is Mastra's run id, the handle approvals resume from.
 */
export class MastraDriver implements RuntimeDriver {
  constructor(private readonly chatAgent: ChatAgent) {}

  async send(input: DriverTurn): Promise<RuntimeConnection> {
    const steering =
      input.segment.kind === 'start'
        ? new SteerDelivery({ threadId: input.branch.memoryThreadId, resourceId: input.ownerId })
        : undefined;
    const events = this.run(input, steering);
    return {
      events,
      ...(steering ? { redirect: (steers) => steering.redirect(steers) } : {}),
      close: () => {
        steering?.close();
        void events.return(undefined);
      },
    };
  }

  private async *run(input: DriverTurn, steering: SteerDelivery | undefined): AsyncGenerator<DriverEvent> {
    const { turn, branch, ownerId, segment, userMessageId, runId, abortSignal } = input;
    try {
      const output = await callModel(this.chatAgent, turn, { branch, ownerId }, segment, {
        userMessageId,
        abortSignal,
        runId,
        stepHooks: steering ? [steering] : [],
      });
      if (output.runId) yield { type: 'resume-token', token: output.runId };
      const chunks = toAISdkStream(output, {
        from: 'agent',
        version: 'v7',
      }) as ReadableStream<UIMessageChunk>;
      let failed = false;
      for await (const chunk of chunks) {
        if (chunk.type === STEER_BOUNDARY_PART) {
          const { steers, continuationMessageId } = (chunk as { data: SteerBoundaryData }).data;
          yield { type: 'steer-boundary', steers, continuationMessageId };
        } else if (chunk.type === 'error') {
          // Mastra reports a failed model call in the stream; the run ends with it.
          failed = true;
          yield { type: 'error', message: chunk.errorText };
        } else yield { type: 'chunk', chunk };
      }
      const undelivered = steering?.close() ?? [];
      if (undelivered.length > 0) yield { type: 'steer-undelivered', steers: undelivered };
      if (!failed) yield { type: 'turn-complete', replyMessageId: output.messageId };
    } catch (error) {
      const undelivered = steering?.close() ?? [];
      if (undelivered.length > 0) yield { type: 'steer-undelivered', steers: undelivered };
      yield { type: 'error', message: error instanceof Error ? error.message : String(error) };
    }
  }
}
