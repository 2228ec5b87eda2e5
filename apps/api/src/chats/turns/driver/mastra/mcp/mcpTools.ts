import { AsyncLocalStorage } from 'node:async_hooks';
import type { ToolMode } from '@chat/contracts';
import { createTool, type Tool } from '@mastra/core/tools';
import { boundToolResult } from '../../../../../agent/toolResult';
import { approvalBy, assertNotOff } from '../chatTools';
import { withoutExitTakeovers } from './exitTakeovers';

/**
 * An MCP server's tool as the chat's agent has it (T3): the same approval rule and off guard as a
 * built-in tool (T1, T2), its result bounded and in a plain shape, and a server that is away or
 * dies mid-call ending the call as a tool error the model reads, never as a failed turn. A call
 * sends its request at most once (F2): see oneRequestPerCall.
 */

/** What the model reads when the tool's server is not available (down, or not started again yet). */
export const MCP_SERVER_UNAVAILABLE = (server: string) =>
  `The MCP server ${server} is unavailable; the tool did not run.`;
/** What the model reads when the server failed while the call was out: it may have acted (F2). */
export const MCP_SERVER_FAILED = (server: string) =>
  `The MCP server ${server} went away during the call; the tool may or may not have run.`;

/**
 * F2: a tool call reaches its server at most once. `@mastra/mcp` 2.0 retries a call once after
 * reconnecting when the connection failed (`Connection closed`, `fetch failed`, ...), also after
 * the request went out, so a server that crashed while working would get the call again (one
 * approved note written twice), and the library has no option to turn that off. What it offers is
 * the server's `traceContext` provider, called as each request is sent (McpServers passes this
 * function): the first request of a call goes, and a second one in the same call aborts the
 * call's signal first, so the SDK refuses it before anything is written. The call then ends as
 * MCP_SERVER_FAILED. The cost: a call whose first request never left (the connection was already
 * gone) is not retried either; the server is checked again (connectionFailed) and the model can
 * call again.
 */
interface OneCall {
  requested: boolean;
  readonly retryRefused: AbortController;
}

const currentCall = new AsyncLocalStorage<OneCall>();

export function oneRequestPerCall(): undefined {
  const call = currentCall.getStore();
  if (!call) return undefined;
  if (call.requested) call.retryRefused.abort(new Error('A tool call is sent to its server at most once.'));
  call.requested = true;
  return undefined;
}

/** The live side of one MCP tool: its server's current connection, looked up at each call. */
export interface McpToolLink {
  /** The tool as the server's current connection has it; undefined while the server is away. */
  current(): Tool | undefined;
  /** The call failed on the connection (not an error the tool reported): check the server again. */
  connectionFailed(error: unknown): void;
}

export function chatToolFromMcp(spec: {
  name: string;
  server: string;
  description: string;
  inputSchema: unknown;
  defaultMode: ToolMode;
  link: McpToolLink;
}): Tool {
  const { name, server, link } = spec;
  return createTool({
    id: name,
    description: spec.description,
    inputSchema: spec.inputSchema as never,
    requireApproval: approvalBy(name, spec.defaultMode),
    execute: async (input, context) => {
      assertNotOff(name, context?.requestContext);
      // Looked up now: the approval may have waited while the server went away or was replaced.
      const tool = link.current();
      if (!tool?.execute) throw new Error(MCP_SERVER_UNAVAILABLE(server));
      let result: unknown;
      const call: OneCall = { requested: false, retryRefused: new AbortController() };
      const stop = context?.abortSignal;
      const signal = stop ? AbortSignal.any([stop, call.retryRefused.signal]) : call.retryRefused.signal;
      try {
        // The client may reconnect inside a call, which hands it the shutdown signals again.
        const execute = tool.execute;
        result = await currentCall.run(call, () =>
          withoutExitTakeovers(() => execute(input as never, { ...context, abortSignal: signal } as never)),
        );
      } catch (error) {
        if (stop?.aborted) throw error;
        if (reportedByTool(error)) throw new Error(firstLine(error));
        link.connectionFailed(error);
        throw new Error(MCP_SERVER_FAILED(server));
      }
      return boundToolResult(plainResult(result));
    },
  }) as unknown as Tool;
}

/** `@mastra/mcp` throws an error the tool itself reported (`isError`) with this id. */
function reportedByTool(error: unknown): boolean {
  return (error as { id?: unknown } | null)?.id === 'MCP_CLIENT_TOOL_EXECUTION_FAILED';
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? '').slice(0, 1_000) || 'The tool failed.';
}

/**
 * An MCP result (`{ content: [...] }`) as `{ text }`, its text parts joined and any other part
 * named (`[image]`), so the model and the transcript's card read it like a built-in tool's JSON. A
 * structured result is kept as it is.
 */
export function plainResult(result: unknown): unknown {
  const content = (result as { content?: unknown } | null)?.content;
  if (
    !Array.isArray(content) ||
    (result as { structuredContent?: unknown }).structuredContent !== undefined
  ) {
    return result;
  }
  const parts = content.map((part: { type?: unknown; text?: unknown }) =>
    part?.type === 'text' && typeof part.text === 'string' ? part.text : `[${String(part?.type ?? 'part')}]`,
  );
  return { text: parts.join('\n') };
}
