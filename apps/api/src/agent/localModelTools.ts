import type { LanguageModelV4Prompt, LanguageModelV4ToolResultOutput } from '@ai-sdk/provider';
import type { LocalModelDirectives } from './localModelDirectives';
import { TOOL_CANCELLED_REASON, TOOL_DENIED_REASON } from './tools';

/**
 * `[[tool:NAME]]` for the built-in local model: the first call of a turn asks for tool NAME (a
 * tool whose input has a `text` string, such as `save_note` or an MCP server's tool, gets the
 * message's text minus directives); once the tool's result is in the prompt,
 * the reply opens with what the tool gave, or says it was denied. A name the agent does not offer
 * gets a sentence saying so, and no call.
 */
export type ToolStep =
  | { kind: 'none' }
  | { kind: 'call'; toolName: string; input: Record<string, unknown> }
  | { kind: 'say'; sentence: string };

export function planToolStep(
  prompt: LanguageModelV4Prompt,
  turn: { index: number; directives: LocalModelDirectives },
  offeredTools: string[],
  textTools: string[] = [],
): ToolStep {
  const { directives } = turn;
  // Tool results of this turn: after its message (steers it received may sit between them).
  const results = prompt
    .slice(turn.index + 1)
    .flatMap((message) => (message.role === 'tool' ? message.content : []))
    .filter((part) => part.type === 'tool-result');
  const inputOf = (tool: string) =>
    textTools.includes(tool) ? { text: directives.cleanText || 'A note.' } : {};
  if (directives.steps > 0) {
    const tool = directives.tool ?? STEP_TOOL;
    return plannedSteps(directives.steps, tool, inputOf(tool), results, offeredTools);
  }
  const name = directives.tool;
  if (!name) return { kind: 'none' };
  // A call already answered is described even if the tool is no longer offered (switched off).
  const result = results.find((part) => part.toolName === name);
  if (result?.type === 'tool-result') return { kind: 'say', sentence: describeOutput(name, result.output) };
  if (!offeredTools.includes(name)) return { kind: 'say', sentence: `I have no tool named ${name}.` };
  return { kind: 'call', toolName: name, input: inputOf(name) };
}

function describeOutput(name: string, output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case 'json':
      return `The tool ${name} returned ${JSON.stringify(output.value)}.`;
    case 'execution-denied':
      return `The tool ${name} was denied, so I answer without it.`;
    case 'text':
      if (output.value.includes(TOOL_DENIED_REASON))
        return `The tool ${name} was denied, so I answer without it.`;
      if (output.value.includes(TOOL_CANCELLED_REASON)) return `The tool ${name} was cancelled.`;
      return `The tool ${name} returned "${output.value}".`;
    default:
      return `The tool ${name} failed.`;
  }
}

/**
 * `[[steps:N]]`: one call per model step until N results are in, then the answer. The tool is
 * `current_time`, or the one `[[tool:NAME]]` names.
 */
function plannedSteps(
  steps: number,
  tool: string,
  input: Record<string, unknown>,
  results: { toolName: string }[],
  offeredTools: string[],
): ToolStep {
  if (!offeredTools.includes(tool)) return { kind: 'say', sentence: `I have no tool named ${tool}.` };
  const done = results.filter((part) => part.toolName === tool).length;
  return done < steps ? { kind: 'call', toolName: tool, input } : { kind: 'none' };
}

const STEP_TOOL = 'current_time';
