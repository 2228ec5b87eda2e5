import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { TokenUsage } from '@chat/contracts';
import { generateText } from 'ai';
import { SUMMARY_INSTRUCTION, summaryRequestText } from '../../../agent/contextSummary';
import type { SummaryRequest } from './types';

/**
 * What every driver does the same way with a model call's figures and with a plain model call,
 * whichever framework runs the turn.
 */

/** A run's token usage as the model reported it (C1), summed over its steps; undefined when none. */
export function tokenUsageOf(
  usage:
    | {
        inputTokens?: number | undefined;
        outputTokens?: number | undefined;
        cachedInputTokens?: number | undefined;
        inputTokenDetails?: { cacheReadTokens?: number | undefined };
      }
    | undefined,
): TokenUsage | undefined {
  if (usage?.inputTokens === undefined && usage?.outputTokens === undefined) return undefined;
  const cached = usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens;
  return {
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    ...(cached ? { cachedInputTokens: cached } : {}),
  };
}

/** A compaction's summary (C3): a plain call of `model` (no memory, no tools) on the request. */
export async function summaryBy(model: LanguageModelV4, request: SummaryRequest): Promise<string> {
  const { text } = await generateText({
    model,
    system: SUMMARY_INSTRUCTION,
    prompt: summaryRequestText(request.previousSummary, request.messages),
    abortSignal: request.abortSignal,
  });
  return text.trim();
}
