import { randomUUID } from 'node:crypto';
import {
  backoffDelay,
  mcpToolName,
  type ToolMode,
  type ToolServer,
  type ToolServerStatus,
} from '@chat/contracts';
import { ConsoleLogger } from '@mastra/core/logger';
import type { Tool } from '@mastra/core/tools';
import type { MastraMCPServerDefinition, MCPClient } from '@mastra/mcp';
import type { CatalogTool } from '../../../../../agent/toolCatalog';
import type { Logger } from '../../../../../platform/logger';
import type { McpServerSpec } from '../../../../../platform/mcpServerList';
import { withoutExitTakeovers } from './exitTakeovers';
import { chatToolFromMcp, oneRequestPerCall } from './mcpTools';

/**
 * The configured MCP servers (T3) and their tools, kept connected in the background. Each server
 * has its own client, so one that is down never holds up another. A server that fails to start,
 * or stops answering, is `unavailable`: its tools leave the catalog (so no chat is offered them)
 * and it is tried again after a backoff that doubles up to a bound; an available one is listed
 * again now and then, which also notices a server that died between calls. Nothing here throws
 * into a request or a turn, and no timer can end the process: every failure is caught and logged.
 */

export interface McpRetry {
  /** The wait before the first retry; it doubles with each failure in a row... */
  firstMs: number;
  /** ...up to this. */
  maxMs: number;
  /** How often an available server is listed again. */
  checkMs: number;
}

export const DEFAULT_MCP_RETRY: McpRetry = { firstMs: 1_000, maxMs: 60_000, checkMs: 30_000 };

/** How long connecting and listing a server's tools may take before it counts as down. */
const CONNECT_TIMEOUT_MS = 15_000;
/** How long closing one client may take at shutdown or before a retry. */
const DISCONNECT_TIMEOUT_MS = 2_000;
/** A tool name the model APIs accept (OpenAI: 64 characters of letters, digits, `_`, `-`). */
const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_DESCRIPTION = 1_000;

interface KnownTool {
  /** The tool as the chat's agent has it (approval rule, off guard, bounded result). */
  chatTool: Tool;
  description: string;
  /** The tool on the server's current connection; undefined while the server is away. */
  live: Tool | undefined;
}

interface ServerState {
  spec: McpServerSpec;
  status: ToolServerStatus;
  client: MCPClient | undefined;
  /** Every tool the server has listed, by its chat name; kept while the server is away. */
  tools: Map<string, KnownTool>;
  failures: number;
  timer: NodeJS.Timeout | undefined;
  checking: Promise<void> | undefined;
}

export class McpServers {
  private readonly states: ServerState[];
  private closed = false;
  private readonly quiet = new ConsoleLogger({ level: 'silent' });

  constructor(
    specs: McpServerSpec[],
    private readonly deps: {
      logger: Logger;
      /** A tool's mode in a chat that never changed it (`TOOL_DEFAULTS`, else `ask`). */
      defaultModeOf: (name: string) => ToolMode;
      retry?: McpRetry;
    },
  ) {
    this.states = specs.map((spec) => ({
      spec,
      status: 'starting',
      client: undefined,
      tools: new Map(),
      failures: 0,
      timer: undefined,
      checking: undefined,
    }));
  }

  private get retry(): McpRetry {
    return this.deps.retry ?? DEFAULT_MCP_RETRY;
  }

  /** Connects every server in the background; the API does not wait for any of them. */
  start(): void {
    for (const state of this.states) void this.check(state);
  }

  /** The servers as the thread detail shows them. */
  statuses(): ToolServer[] {
    return this.states.map((state) => ({ name: state.spec.name, status: state.status }));
  }

  /** The tools offered now: those of the available servers, in configuration and listing order. */
  catalogTools(): CatalogTool[] {
    return this.states.flatMap((state) =>
      state.status !== 'available'
        ? []
        : [...state.tools].flatMap(([name, tool]) =>
            tool.live
              ? [
                  {
                    name,
                    description: tool.description,
                    defaultMode: this.deps.defaultModeOf(name),
                    server: state.spec.name,
                  },
                ]
              : [],
          ),
    );
  }

  /**
   * Every tool any server has listed, for the agent: a run resumed after an approval finds its
   * tool even if the server went away meanwhile (the call then ends as a tool error). Which tools
   * a step offers is the chat's policy over the catalog (ToolPolicyStep), which has only the
   * available ones.
   */
  agentTools(): Record<string, Tool> {
    const tools: Record<string, Tool> = {};
    for (const state of this.states) for (const [name, tool] of state.tools) tools[name] = tool.chatTool;
    return tools;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.states.map(async (state) => {
        clearTimeout(state.timer);
        const client = state.client;
        state.client = undefined;
        await this.disconnect(client);
      }),
    );
  }

  /** Connects (or lists again) one server; on failure marks it unavailable and plans the retry. */
  private check(state: ServerState): Promise<void> {
    state.checking ??= this.connectAndList(state).finally(() => {
      state.checking = undefined;
    });
    return state.checking;
  }

  private async connectAndList(state: ServerState): Promise<void> {
    if (this.closed) return;
    clearTimeout(state.timer);
    const { name } = state.spec;
    try {
      state.client ??= await this.newClient(state.spec);
      // Closed while the client's package loaded: it has connected to nothing yet.
      if (this.closed) return;
      const client = state.client;
      const { toolsets, errors } = await withoutExitTakeovers(() =>
        client.listToolsetsWithErrors({ perServerTimeoutMs: CONNECT_TIMEOUT_MS }),
      );
      if (errors[name] !== undefined) throw new Error(errors[name]);
      if (this.closed) return;
      this.take(state, toolsets[name] ?? {});
      if (state.status !== 'available') {
        this.deps.logger.info({ mcpServer: name, tools: state.tools.size }, 'MCP server available');
      }
      state.status = 'available';
      state.failures = 0;
      this.schedule(state, this.retry.checkMs);
    } catch (error) {
      if (this.closed) return;
      const client = state.client;
      state.client = undefined;
      for (const tool of state.tools.values()) tool.live = undefined;
      state.status = 'unavailable';
      state.failures += 1;
      const retryInMs = backoffDelay(state.failures, this.retry.firstMs, this.retry.maxMs);
      this.deps.logger.warn(
        { mcpServer: name, failures: state.failures, retryInMs, reason: this.reasonOf(state.spec, error) },
        'MCP server unavailable; its tools are not offered until it answers again',
      );
      this.schedule(state, retryInMs);
      await this.disconnect(client);
    }
  }

  /** Takes a server's listing: its tools join (or stay in) the catalog under their chat names. */
  private take(state: ServerState, listed: Record<string, Tool>): void {
    const { name: server } = state.spec;
    for (const tool of state.tools.values()) tool.live = undefined;
    for (const [toolName, tool] of Object.entries(listed)) {
      const name = mcpToolName(server, toolName);
      if (!MODEL_TOOL_NAME.test(name)) {
        this.deps.logger.warn(
          { mcpServer: server, tool: toolName.slice(0, 100) },
          'MCP tool skipped: its name is too long or not a model tool name',
        );
        continue;
      }
      const description = (tool.description ?? '').trim().slice(0, MAX_DESCRIPTION);
      const known = state.tools.get(name);
      if (known && known.description === description) {
        known.live = tool;
        continue;
      }
      const entry: KnownTool = { chatTool: undefined as unknown as Tool, description, live: tool };
      entry.chatTool = chatToolFromMcp({
        name,
        server,
        description: description || `${toolName} (from the MCP server ${server})`,
        inputSchema: tool.inputSchema,
        defaultMode: this.deps.defaultModeOf(name),
        link: {
          current: () => (state.status === 'available' ? entry.live : undefined),
          connectionFailed: () => {
            void this.check(state);
          },
        },
      });
      state.tools.set(name, entry);
    }
  }

  private schedule(state: ServerState, ms: number): void {
    clearTimeout(state.timer);
    if (this.closed) return;
    state.timer = setTimeout(() => void this.check(state), ms);
    state.timer.unref();
  }

  private async newClient(spec: McpServerSpec): Promise<MCPClient> {
    // Loaded with the first server: a deployment with none never loads it (about 11 MB of
    // resident memory in every API process).
    const { MCPClient } = await import('@mastra/mcp');
    // Called as each request is sent: a tool call's second request is refused (F2).
    const traceContext = oneRequestPerCall;
    const server: MastraMCPServerDefinition =
      spec.transport === 'stdio'
        ? {
            traceContext,
            command: spec.command,
            args: spec.args,
            env: spec.env,
            ...(spec.cwd ? { cwd: spec.cwd } : {}),
            // The server's own output is not the API's log (and could echo what it was given).
            stderr: 'ignore',
            timeout: spec.timeoutMs,
          }
        : {
            traceContext,
            url: new URL(spec.url),
            requestInit: { headers: spec.headers },
            connectTimeout: CONNECT_TIMEOUT_MS,
            timeout: spec.timeoutMs,
          };
    // A fresh id per connection: MCPClient refuses two instances of one configuration otherwise.
    const client = new MCPClient({
      id: `chat-mcp-${spec.name}-${randomUUID()}`,
      servers: { [spec.name]: server },
    });
    // The client logs tool arguments and raw errors; the API logs what it needs itself.
    client.__setLogger(this.quiet);
    return client;
  }

  private async disconnect(client: MCPClient | undefined): Promise<void> {
    if (!client) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        withoutExitTakeovers(() => client.disconnect()),
        new Promise((resolve) => {
          timer = setTimeout(resolve, DISCONNECT_TIMEOUT_MS);
        }),
      ]);
    } catch {
      // A client that fails to close is dropped; its process ends with ours.
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Why a server is away, for the operator's log: the error's first line, with every value of its
   * env and headers (and the URL's credentials and query) replaced, since a library may quote them.
   */
  private reasonOf(spec: McpServerSpec, error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    let reason = (message.split('\n')[0] ?? '').slice(0, 500);
    for (const secret of secretsOf(spec)) reason = reason.split(secret).join('[redacted]');
    return reason;
  }
}

function secretsOf(spec: McpServerSpec): string[] {
  const values =
    spec.transport === 'stdio'
      ? Object.values(spec.env)
      : [...Object.values(spec.headers), ...urlSecrets(spec.url)];
  // Longest first, so a secret that contains another is replaced whole.
  return values.filter((value) => value.length >= 3).sort((a, b) => b.length - a.length);
}

function urlSecrets(url: string): string[] {
  const parsed = new URL(url);
  return [parsed.username, parsed.password, ...parsed.searchParams.values()].flatMap((value) =>
    value ? [value, decodeURIComponent(value)] : [],
  );
}
