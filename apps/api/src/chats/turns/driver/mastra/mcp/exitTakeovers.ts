/**
 * `@mastra/mcp` tears its connections down when the process goes away, and to do so each client
 * takes over the process's shutdown signals: on connect it adds a SIGTERM and a SIGHUP handler that
 * end the process (`gracefulExit`), and `exit-hook` (its dependency) adds SIGINT and SIGTERM
 * handlers that call `process.exit` once its own hooks ran. Left in place, a SIGTERM would end the
 * API at once instead of letting it settle its running replies first (main.ts), the same takeover
 * `@chat/db`'s `leaveShutdownSignalsToCaller` undoes for the embedded database. The API closes its
 * MCP clients itself (McpServers.close), so those handlers are removed after every operation that
 * may connect. Matched narrowly, by what they are, so no other handler is touched. Kept although
 * it reads function text: `@mastra/mcp` offers no option to leave the signals alone, and
 * `mcpProcess.test.ts` (a clean shutdown on SIGTERM with a server connected) fails if it stops matching.
 */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function isExitTakeover(listener: (...args: unknown[]) => unknown): boolean {
  // exit-hook registers `exit.bind(...)`; the MCP client an arrow that calls `gracefulExit()`.
  return (
    listener.name === 'bound exit' || /\bgracefulExit\(/.test(Function.prototype.toString.call(listener))
  );
}

export function removeExitTakeovers(): void {
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (isExitTakeover(listener as (...args: unknown[]) => unknown)) process.off(signal, listener);
    }
  }
}

/** Runs an MCP operation and removes the signal takeovers it may have added, however it ends. */
export async function withoutExitTakeovers<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    removeExitTakeovers();
  }
}
