import type { SuspendedCall } from '../types';

/**
 * The AI SDK driver's resume token for a suspended call: the call itself (which tool, with what
 * input), so resuming needs nothing but what the host stores with the approval request. Opaque to
 * the host; prefixed, so a token of another driver (Mastra's run id) is told apart.
 */
const PREFIX = 'ai-sdk-call:';

type Call = Omit<SuspendedCall, 'resumeToken'>;

export function tokenOfCall(call: Call): string {
  const { toolCallId, toolName, args } = call;
  return PREFIX + Buffer.from(JSON.stringify({ toolCallId, toolName, args })).toString('base64url');
}

/** The call a token of this driver names; undefined for any other token. */
export function callOfToken(token: string): Call | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  try {
    const call = JSON.parse(Buffer.from(token.slice(PREFIX.length), 'base64url').toString('utf8')) as Call;
    return typeof call.toolCallId === 'string' && typeof call.toolName === 'string' ? call : undefined;
  } catch {
    return undefined;
  }
}
