import { turnErrorMessages } from '@chat/contracts';
import type { Agent } from '@mastra/core/agent';
import type { InputProcessor } from '@mastra/core/processors';
import { RequestContext } from '@mastra/core/request-context';
import type { LiveToolPolicy } from '../../../../agent/toolPolicy';
import { TOOL_DENIED_REASON } from '../../../../agent/tools';
import { fileReferencePart } from '../../../attachments/parts';
import { hiddenInstructions } from '../hiddenInstructions';
import { MAX_MODEL_STEPS } from '../modelSteps';
import type { DriverTurn, SuspendedCall } from '../types';
import { CHAT_MODEL_KEY } from './chatAgent';
import { toolPolicyContext } from './chatTools';

/** The model call of one run: the turn's message with its branch's memory, or a resumed run. */
export async function callModel(
  agent: Agent,
  input: DriverTurn,
  call: { runId: string; stepHooks: InputProcessor[]; tools?: LiveToolPolicy },
) {
  const { conversation, message, segment, abortSignal, history } = input;
  const memory = { thread: conversation.id, resource: conversation.ownerId };
  // M2: the agent resolves its model per call from this (chatAgent.ts). T2: the chat's tool
  // settings travel with it too; the step hook (ToolPolicyStep) and each tool's approval rule read
  // them again as the run goes.
  const requestContext = call.tools ? toolPolicyContext(call.tools) : new RequestContext();
  if (input.model) requestContext.set(CHAT_MODEL_KEY, input.model);
  if (segment.kind === 'start') {
    // Hidden, for this one call only (hiddenInstructions): Mastra does not store `system`.
    const hidden = hiddenInstructions(input);
    return await agent.stream(
      [
        {
          id: message.id,
          role: 'user',
          // Images are stored as references to the media route, never as bytes.
          parts: [{ type: 'text', text: message.text }, ...message.attachments.map(fileReferencePart)],
        },
      ],
      {
        // Recall reads exactly the messages after the marker, newest first (one bounded query).
        // At least one: with none Mastra leaves out the processor that saves the run's messages.
        memory: { ...memory, options: { lastMessages: Math.max(1, history.messages) } },
        abortSignal,
        runId: call.runId,
        requestContext,
        maxSteps: MAX_MODEL_STEPS,
        inputProcessors: call.stepHooks,
        ...(hidden.length > 0 ? { system: hidden.join('\n\n') } : {}),
      },
    );
  }
  // The resume token is Mastra's run id: Mastra resumes the suspended run from its stored
  // snapshot, on any instance, after a restart too.
  const { resumeToken: runId, toolCallId } = segment.call;
  const bounded = { ...memory, options: { lastMessages: Math.max(1, history.messages) } };
  const resumed = { runId, toolCallId, memory: bounded, abortSignal, requestContext };
  return segment.decision === 'approve'
    ? await agent.approveToolCall(resumed)
    : await agent.declineToolCall({ ...resumed, reason: TOOL_DENIED_REASON });
}

/** Mastra's approval chunk (`data-tool-call-approval`) carries the handle to resume the run. */
export function suspendedCallOf(data: unknown): SuspendedCall | undefined {
  const { runId, toolCallId, toolName, args } = (data ?? {}) as Record<string, unknown>;
  if (typeof runId !== 'string' || typeof toolCallId !== 'string' || typeof toolName !== 'string') {
    return undefined;
  }
  return { resumeToken: runId, toolCallId, toolName, args: args ?? {} };
}

/**
 * A run's failure as Mastra reports it in the stream, for the host to word and log (F3): Mastra
 * serialises the error (stack, code, cause and its own `domain` included) into the stream's error
 * text. The error comes back with those fields, so the host can tell a database's error from a
 * model's; plain text becomes its message.
 */
export function streamedError(errorText: string): Error {
  try {
    const parsed = JSON.parse(errorText) as unknown;
    if (parsed && typeof parsed === 'object') {
      const { message, ...fields } = parsed as { message?: unknown };
      const text = typeof message === 'string' && message ? message : turnErrorMessages.modelFailed;
      return Object.assign(new Error(text), fields);
    }
  } catch {
    // Plain text.
  }
  return new Error(errorText.split('\n')[0]?.trim() || turnErrorMessages.modelFailed);
}
