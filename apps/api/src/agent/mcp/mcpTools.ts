import type { ToolMode } from '@chat/contracts';
import { createTool, type Tool } from '@mastra/core/tools';
import { boundToolResult } from '../toolResult';
import { approvalBy, assertNotOff } from '../tools';
import { withoutExitTakeovers } from './exitTakeovers';

/**
 * An MCP server's tool as the chat's agent has it (T3): the same approval rule and off guard as a
 * built-in tool (T1, T2), its result bounded and in a plain shape, and a server that is away or
 * dies mid-call ending the call as a tool error the model reads, never as a failed turn.
 */

/** What the model reads when the tool's server is not available (down, or not started again yet). */
export const MCP_SERVER_UNAVAILABLE = (server: string) =>
  `The MCP server ${server} is unavailable; the tool did not run.`;
/** What the model reads when the server stopped answering while the tool ran. */
export const MCP_SERVER_FAILED = (server: string) =>
  `The MCP server ${server} stopped answering; the tool did not finish.`;

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
      try {
        // The client may reconnect inside a call, which hands it the shutdown signals again.
        const execute = tool.execute;
        result = await withoutExitTakeovers(() => execute(input as never, context as never));
      } catch (error) {
        if (context?.abortSignal?.aborted) throw error;
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
