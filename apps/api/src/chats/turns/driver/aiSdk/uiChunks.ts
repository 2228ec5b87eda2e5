import { type TextStreamPart, type ToolSet, toUIMessageChunk, type UIMessageChunk } from 'ai';

/** What the run's UI message stream is asked for (the options the driver gave `toUIMessageStream`). */
export interface UiChunkOptions {
  tools: ToolSet;
  /** A resumed reply goes on in the message the person sees: no `start` of its own. */
  sendStart: boolean;
  /** The reply's message id, on its `start` chunk. */
  messageId: string;
  /** The text an `error` (or a failed tool's) chunk carries. */
  onError(error: unknown): string;
}

/**
 * The UI message chunks of a `streamText` run, made from its full stream part by part as the AI
 * SDK's `toUIMessageStream` makes them, without that function's four web streams (a pull stream,
 * two transforms and the async-iterable wrapper), which every word went through (ADR-058).
 *
 * The same chunks in the same order: each part is converted by the SDK's own `toUIMessageChunk`,
 * which is what `toUIMessageStream` calls, and what it adds is only for options this driver does
 * not use (message metadata, `originalMessages`, step and end callbacks), except the response
 * message id on `start`, given here as `responseMessageId`. `test/aiSdkUiChunks.test.ts` checks
 * the chunks equal `toUIMessageStream`'s for the same model output.
 */
export function uiChunkOf(
  part: TextStreamPart<ToolSet>,
  options: UiChunkOptions,
): UIMessageChunk | undefined {
  return toUIMessageChunk(part, {
    tools: options.tools,
    sendStart: options.sendStart,
    onError: options.onError,
    responseMessageId: options.messageId,
  });
}

/** The run's parts, read with a reader of its own (no async iterator wrapper per part). */
export function partsOf(result: {
  fullStream: ReadableStream<TextStreamPart<ToolSet>>;
}): ReadableStreamDefaultReader<TextStreamPart<ToolSet>> {
  return result.fullStream.getReader();
}
