import { type HitlRequest, toolLabel } from '@chat/contracts';
import type { DynamicToolUIPart, ToolUIPart } from 'ai';

/** A tool call part of a reply, static or dynamic (an MCP tool). */
export type ToolPart = ToolUIPart | DynamicToolUIPart;

/** Where one tool call stands, as the transcript says it. */
export type ToolOutcome = 'pending' | 'approved' | 'denied' | 'cancelled' | 'done' | 'failed' | 'running';

/**
 * Where a call stands: its approval request (H3), when it has one, decides first (a pending one
 * waits for the person), then the part's own state.
 */
export function toolOutcome(part: ToolPart, request: Pick<HitlRequest, 'status'> | undefined): ToolOutcome {
  const status = request?.status;
  if (status === 'pending' && part.state !== 'output-available') return 'pending';
  if (status === 'cancelled') return 'cancelled';
  if (part.state === 'output-error') return 'failed';
  if (status === 'denied' || part.state === 'output-denied') return 'denied';
  if (status === 'approved') return 'approved';
  if (part.state === 'output-available') return 'done';
  return 'running';
}

/**
 * What a tool that asks first does, in words a person reads after "Allow …?" and "You
 * approved …". Tools not named here (a configured MCP server's) are named by their label
 * (`echo from fixture`).
 */
const APPROVAL_PHRASES: Record<string, string> = {
  save_note: 'saving the note',
};

export function approvalPhrase(toolName: string): string {
  return APPROVAL_PHRASES[toolName] ?? `running ${toolLabel(toolName)}`;
}

/**
 * The one line a call, or a run of calls of the same tool, is shown as (a call waiting for a
 * decision is a card of its own, never a line).
 */
export function toolSummary(toolName: string, outcomes: readonly ToolOutcome[]): string {
  const label = toolLabel(toolName);
  const count = outcomes.length;
  const failed = outcomes.filter((outcome) => outcome === 'failed').length;
  const only = count === 1 ? outcomes[0] : undefined;
  switch (only) {
    case 'approved':
      return `You approved ${approvalPhrase(toolName)}`;
    case 'denied':
      return `You denied ${approvalPhrase(toolName)}`;
    case 'cancelled':
      return `Not run: the reply was stopped before you decided on ${approvalPhrase(toolName)}`;
    case 'failed':
      return `${label} failed`;
  }
  if (outcomes.at(-1) === 'running') return count === 1 ? `Using ${label}…` : `Using ${label} (${count})…`;
  const times = count === 1 ? '' : count === 2 ? ' twice' : ` ${count} times`;
  return `Used ${label}${times}${failed ? ` · ${failed} failed` : ''}`;
}

/** Keys that only name things inside the system (`id`, `noteId`, `tool_call_id`): not for people. */
const INTERNAL_ID = /^(id|.+Id|.+_id)$/;

function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !INTERNAL_ID.test(key))
      .map(([key, inner]) => [key, withoutIds(inner)]),
  );
}

/** A tool's arguments or result as the transcript shows them: JSON text, internal ids left out. */
export function toolJson(value: unknown): string {
  return JSON.stringify(withoutIds(value ?? {}), null, 2);
}

/** Nothing worth showing: no arguments (`{}`), or nothing at all. */
export function isEmptyJson(value: unknown): boolean {
  const shown = withoutIds(value ?? {});
  return shown !== null && typeof shown === 'object' && Object.keys(shown).length === 0;
}

/**
 * A failed call's error as a person reads it: Mastra serialises a tool's error (its stack, its
 * name) into the part's error text; only the message is shown.
 */
export function toolErrorText(errorText: string): string {
  try {
    const parsed = JSON.parse(errorText) as { message?: unknown };
    if (typeof parsed?.message === 'string' && parsed.message) return parsed.message;
  } catch {
    // Plain text already.
  }
  return errorText.split('\n')[0]?.trim() || 'The tool call failed.';
}

/** The input key that says what an agent tool's call is about (A6): Claude Code's tool names. */
const DETAIL_KEYS: Record<string, readonly string[]> = {
  Bash: ['command'],
  BashOutput: ['bash_id'],
  Read: ['file_path'],
  Write: ['file_path'],
  Edit: ['file_path'],
  MultiEdit: ['file_path'],
  NotebookEdit: ['notebook_path'],
  Glob: ['pattern'],
  Grep: ['pattern'],
  LS: ['path'],
  WebFetch: ['url'],
  WebSearch: ['query'],
  Task: ['description'],
  Agent: ['description'],
};

const DETAIL_MAX = 160;

/**
 * What one call is about, in one line beside its summary: the command a `Bash` call runs, the
 * file a `Read`, `Edit` or `Write` works on, the pattern a `Grep` looks for (and where). Null for
 * a tool without one (the built-in tools, an MCP server's), whose arguments stay in the details.
 */
export function toolCallDetail(toolName: string, input: unknown): string | null {
  const keys = DETAIL_KEYS[toolName];
  if (!keys || input === null || typeof input !== 'object') return null;
  const values = input as Record<string, unknown>;
  const value = keys.map((key) => values[key]).find((found) => typeof found === 'string' && found.trim());
  if (typeof value !== 'string') return null;
  let line = value.trim().split('\n')[0] ?? '';
  if (value.trim().includes('\n')) line += ' …';
  if (toolName === 'Grep' && typeof values.path === 'string' && values.path) line += ` in ${values.path}`;
  return line.length > DETAIL_MAX ? `${line.slice(0, DETAIL_MAX - 1)}…` : line;
}

/** A call's result as shown: a text result (an agent tool's output) as the text, else as JSON. */
export function toolResultText(output: unknown): string {
  return typeof output === 'string' ? output : toolJson(output);
}
