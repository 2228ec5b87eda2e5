import { fileURLToPath } from 'node:url';

/** The test MCP server (stdio): `echo` and `slow` (fixtures/mcp/testServer.ts). */
export const MCP_FIXTURE = fileURLToPath(new URL('../fixtures/mcp/testServer.ts', import.meta.url));

/** An `MCP_SERVERS` entry that runs the test MCP server under this Node (which strips its types). */
export function fixtureServer(name: string, env: Record<string, string> = {}) {
  return { name, command: process.execPath, args: [MCP_FIXTURE], env };
}
