import type { SteerBoundaryData } from '@chat/contracts';
import { STEER_BOUNDARY_PART, turnErrorMessages } from '@chat/contracts';
import { toAISdkStream } from '@mastra/ai-sdk';
import type { UIMessageChunk } from 'ai';
import { LiveToolPolicy } from '../../../../agent/toolPolicy';
import { isDatabaseUnavailable } from '../../../../platform/databaseErrors';
import { WordedFailure } from '../../../../platform/errors';
import { summaryBy, tokenUsageOf } from '../modelCalls';
import type { DriverEvent, DriverTurn, RuntimeConnection, RuntimeDriver, SummaryRequest } from '../types';
import type { ChatAgent } from './chatAgent';
import { FreshRuns } from './freshRuns';
import { callModel, streamedError, suspendedCallOf } from './modelCall';
import { RunThreads } from './runThreads';
import { SteerDelivery } from './steerDelivery';
import { ToolPolicyStep } from './toolPolicyStep';

/** The workflow under which Mastra stores the snapshot of an agent run suspended for approval. */
const AGENT_LOOP_WORKFLOW = 'agentic-loop';

/**
 * The first runtime driver: the Mastra agent with its Postgres memory. A started turn can be
 * steered (Mastra's step hook, SteerDelivery); a run resumed after a tool approval cannot (Mastra
 * resumes it from a stored snapshot, without per-call hooks), so steers sent then are queued. The
 * resume token is Mastra's run id, the handle approvals resume from; run ids are reserved here
 * (FreshRuns), so a run's pending snapshot need not be written.
 */
export class MastraDriver implements RuntimeDriver {
  /** The agent's memory saves each run's messages as it ends. */
  readonly savesMessages = true;

  private constructor(
    private readonly chatAgent: ChatAgent,
    private readonly runs: FreshRuns,
    private readonly threads: RunThreads,
  ) {}

  /**
   * The driver for `chatAgent`, its storage's workflow store wrapped for fresh runs and its memory
   * store for the thread rows of running runs.
   */
  static async create(chatAgent: ChatAgent): Promise<MastraDriver> {
    const runs = new FreshRuns();
    const workflows = await chatAgent.storage.getStore('workflows');
    if (workflows) runs.wrap(workflows);
    const threads = new RunThreads();
    const memory = await chatAgent.storage.getStore('memory');
    if (memory) threads.wrap(memory);
    return new MastraDriver(chatAgent, runs, threads);
  }

  async send(input: DriverTurn): Promise<RuntimeConnection> {
    const steering =
      input.segment.kind === 'start'
        ? new SteerDelivery(
            { threadId: input.conversation.id, resourceId: input.conversation.ownerId },
            input.takeSteers,
          )
        : undefined;
    const events = this.run(input, steering);
    return {
      events,
      steerable: steering !== undefined,
      close: () => {
        steering?.close();
        void events.return(undefined);
      },
    };
  }

  /** A plain model call (no memory, no tools): the summary request and its one message. */
  async summarize(request: SummaryRequest): Promise<string> {
    return await summaryBy(this.chatAgent.model, request);
  }

  async discard(resumeToken: string): Promise<void> {
    const workflows = await this.chatAgent.storage.getStore('workflows');
    await workflows?.deleteWorkflowRunById({ runId: resumeToken, workflowName: AGENT_LOOP_WORKFLOW });
  }

  /** The run's live view of the chat's tool settings (T2); none when the host keeps no settings. */
  private async toolPolicyOf(input: DriverTurn): Promise<LiveToolPolicy | undefined> {
    const read = input.toolModes;
    if (!read) return undefined;
    const policy = new LiveToolPolicy(() => read(), this.chatAgent.tools.modes({}));
    await policy.refresh();
    return policy;
  }

  private async *run(input: DriverTurn, steering: SteerDelivery | undefined): AsyncGenerator<DriverEvent> {
    // M2: a chat whose model was removed from the configuration fails here, never on another model.
    if (input.model && !this.chatAgent.models.has(input.model)) {
      yield { type: 'error', error: new WordedFailure(turnErrorMessages.modelRemoved(input.model)) };
      return;
    }
    const fresh = this.runs.begin();
    const releaseThread = this.threads.begin(input.conversation.id);
    // Until the model call is under way a failure to reach the database stored nothing.
    let started = false;
    try {
      const tools = await this.toolPolicyOf(input);
      const output = await callModel(this.chatAgent.agent, input, {
        runId: fresh.runId,
        stepHooks: [...(steering ? [steering] : []), ...(tools ? [new ToolPolicyStep(tools)] : [])],
        ...(tools ? { tools } : {}),
      });
      started = true;
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
        } else if (chunk.type === 'data-tool-call-approval') {
          // Mastra's own approval part carries its run id: the host gets the call, never the part.
          const call = suspendedCallOf(chunk.data);
          if (call) yield { type: 'suspended', call };
        } else if (chunk.type === 'error') {
          // Mastra reports a failed model call in the stream; the run ends with it.
          failed = true;
          yield { type: 'error', error: streamedError(chunk.errorText) };
        } else yield { type: 'chunk', chunk };
      }
      if (!failed) {
        const usage = tokenUsageOf(await output.totalUsage.catch(() => undefined));
        if (usage) yield { type: 'usage', usage };
        yield { type: 'turn-complete', saved: await savedAtEnd(output) };
      }
    } catch (error) {
      if (!started && isDatabaseUnavailable(error)) {
        yield { type: 'unavailable', cause: error };
        return;
      }
      yield { type: 'error', error };
    } finally {
      steering?.close();
      fresh.release();
      releaseThread();
    }
  }
}

/**
 * Whether Mastra's end-of-run save went through. It saves the run's messages once, as the stream
 * finishes, in an output processor; when that save fails (the database is away) the UI stream
 * still ends normally and only the output's finish reason and error tell.
 */
async function savedAtEnd(output: { finishReason: Promise<string | undefined>; error: Error | undefined }) {
  const reason = await output.finishReason.catch(() => 'error');
  return reason !== 'error' && output.error === undefined;
}
