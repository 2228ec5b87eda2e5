/**
 * Most model steps (calls, each after a tool result) one run may take, in every driver. Mastra's
 * default is 5 and the AI SDK's 1, which cut a longer tool chain off without an answer (the local
 * model's `[[steps:N]]` goes to 20).
 */
export const MAX_MODEL_STEPS = 25;
