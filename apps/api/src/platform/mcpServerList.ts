import { z } from 'zod';

/**
 * `MCP_SERVERS` (T3): the MCP servers whose tools the agent gets, as a JSON list. Each entry has a
 * `name` and either a stdio `command` (with optional `args`, `env`, `cwd`) or an HTTP `url` (with
 * optional `headers`), and an optional `timeoutMs` for each request to it, e.g.
 *   [{"name":"files","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv"]},
 *    {"name":"search","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ..."}}]
 * The name becomes part of each tool's name (`mcp__<name>__<tool>`), so it takes letters, digits
 * and `-` only. `env` and `headers` hold secrets: they go to the server and nowhere else (not the
 * log, not the thread detail).
 */

export type McpServerSpec =
  | {
      transport: 'stdio';
      name: string;
      command: string;
      args: string[];
      env: Record<string, string>;
      cwd?: string;
      timeoutMs: number;
    }
  | { transport: 'http'; name: string; url: string; headers: Record<string, string>; timeoutMs: number };

/** A request to a server (listing its tools, one call) fails after this long unless it says otherwise. */
export const MCP_REQUEST_TIMEOUT_MS = 60_000;

const serverName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/, 'must be 1 to 32 letters, digits or "-" (no "_")');
const strings = z.record(z.string(), z.string());

const serverEntry = z
  .object({
    name: serverName,
    command: z.string().min(1).optional(),
    args: z.array(z.string()).max(100).optional(),
    env: strings.optional(),
    cwd: z.string().min(1).optional(),
    url: z
      .url()
      .refine((value) => /^https?:$/.test(new URL(value).protocol), 'must be an http(s) URL')
      .optional(),
    headers: strings.optional(),
    timeoutMs: z.number().int().min(100).max(600_000).optional(),
  })
  .strict()
  .superRefine((entry, context) => {
    if ((entry.command === undefined) === (entry.url === undefined)) {
      context.addIssue({ code: 'custom', message: 'needs either "command" (stdio) or "url" (HTTP)' });
    } else if (entry.url !== undefined && (entry.args || entry.env || entry.cwd)) {
      context.addIssue({ code: 'custom', message: '"args", "env" and "cwd" go with "command", not "url"' });
    } else if (entry.command !== undefined && entry.headers) {
      context.addIssue({ code: 'custom', message: '"headers" go with "url", not "command"' });
    }
  })
  .transform((entry): McpServerSpec => {
    const timeoutMs = entry.timeoutMs ?? MCP_REQUEST_TIMEOUT_MS;
    if (entry.url !== undefined) {
      return { transport: 'http', name: entry.name, url: entry.url, headers: entry.headers ?? {}, timeoutMs };
    }
    return {
      transport: 'stdio',
      name: entry.name,
      command: entry.command ?? '',
      args: entry.args ?? [],
      env: entry.env ?? {},
      ...(entry.cwd ? { cwd: entry.cwd } : {}),
      timeoutMs,
    };
  });

/** How many servers one API connects to at most. */
const MAX_SERVERS = 20;

/** The parsed list; names are unique (a tool's name says which server it is from). */
export const mcpServerList = z
  // The list's own message is for what is not a list at all; too many servers says so.
  .array(serverEntry, {
    error: (issue) => (issue.code === 'invalid_type' ? 'must be a JSON list of servers' : undefined),
  })
  .max(MAX_SERVERS, {
    error: (issue) =>
      `at most ${MAX_SERVERS} servers, not ${Array.isArray(issue.input) ? issue.input.length : 'more'}`,
  })
  .superRefine((servers, context) => {
    const seen = new Set<string>();
    for (const [index, server] of servers.entries()) {
      if (seen.has(server.name)) {
        context.addIssue({
          code: 'custom',
          path: [index, 'name'],
          message: `"${server.name}" is named twice`,
        });
      }
      seen.add(server.name);
    }
  });

/** The environment's text as JSON; what is not JSON is left for the schema to refuse by name. */
export function parseJsonSetting(value: unknown): unknown {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(String(value));
  } catch {
    return value;
  }
}
