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

/** A run's parts as read: a reader, and the part in each value it reads. */
export interface RunParts {
  reader: ReadableStreamDefaultReader<unknown>;
  partOf(value: unknown): TextStreamPart<ToolSet>;
  /** Read from the result's own stream, not through `fullStream`'s copy. */
  direct: boolean;
}

/**
 * The run's parts, read with a reader of our own (no async iterator wrapper per part). The
 * result's `fullStream` is a branch of a `tee` of its own stream and two transforms more (one takes
 * the part out of the `{ part, partialOutput }` its own stream carries, one wraps it for `for
 * await`), and the other branch, which nobody reads, keeps a copy of every part until the run is
 * dropped. So the result's own stream (`baseStream`, not in the SDK's types, the `ai` version is
 * pinned) is read when it is there and unread, with the part taken out here; otherwise
 * `fullStream`. `test/aiSdkUiChunks.test.ts` checks the chunks either way, and that the result's
 * own stream is what is read.
 */
export function partsOf(result: { fullStream: ReadableStream<TextStreamPart<ToolSet>> }): RunParts {
  const own = (result as { baseStream?: unknown }).baseStream;
  if (own instanceof ReadableStream && !own.locked) {
    return { reader: own.getReader(), partOf: partOfBase, direct: true };
  }
  return { reader: result.fullStream.getReader(), partOf: itself, direct: false };
}

function partOfBase(value: unknown): TextStreamPart<ToolSet> {
  return (value as { part: TextStreamPart<ToolSet> }).part;
}

function itself(value: unknown): TextStreamPart<ToolSet> {
  return value as TextStreamPart<ToolSet>;
}
