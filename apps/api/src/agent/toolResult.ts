import { MAX_TOOL_RESULT_CHARS } from '@chat/contracts';

/** What a cut result says about itself, for the model and the person reading the transcript. */
export const TOOL_RESULT_TRUNCATED = (shown: number, total: number) =>
  `Result truncated: the first ${shown} of ${total} characters are shown.`;

/**
 * A tool's result as the model and the transcript get it: whole when its JSON fits the bound,
 * else the start of that JSON as text with a clear note, so one large result cannot flood the
 * model's context or the stored reply.
 */
export function boundToolResult(result: unknown, max = MAX_TOOL_RESULT_CHARS): unknown {
  const json = JSON.stringify(result);
  if (json === undefined || json.length <= max) return result;
  return { truncated: true, note: TOOL_RESULT_TRUNCATED(max, json.length), partial: json.slice(0, max) };
}
