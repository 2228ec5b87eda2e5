/**
 * The runtime drivers a deployment's turns can run through (`CHAT_RUNTIME`), its default first:
 * `ai-sdk`, one AI SDK `streamText` request per run, passes the same suite at the lower cost
 * (ADR-045); `mastra`, the Mastra agent, stays selectable. Its own file, free of the configuration's
 * parsing, so the bench (`@chat/api/chat-runtimes`) runs each one by the same names.
 */
export const CHAT_RUNTIMES = ['ai-sdk', 'mastra'] as const;

export type ChatRuntime = (typeof CHAT_RUNTIMES)[number];

export const DEFAULT_CHAT_RUNTIME: ChatRuntime = CHAT_RUNTIMES[0];
