import { Readable } from 'node:stream';
import { type NotFoundSubject, refusalMessages } from '@chat/contracts';
import type { UIMessageChunk } from 'ai';
import { getRouterParam, type H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { z } from 'zod';
import { ApiError, notFound } from './errors';
import { jsonBodyOf } from './requestBody';

/**
 * Validates the JSON body the request guard read (`platform/requestBody.ts`: bounded, UTF-8, no
 * U+0000 or lone surrogates); anything malformed is `400 bad_request`, changing nothing. A refusal about one field names it
 * (`error.field`, e.g. `"email"`).
 */
export async function readJson<T extends z.ZodType>(event: H3Event, schema: T): Promise<z.infer<T>> {
  const parsed = schema.safeParse(jsonBodyOf(event));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.length ? issue.path.join('.') : undefined;
    const where = field ? `${field}: ` : '';
    throw new ApiError(
      'bad_request',
      refusalMessages.bad_request.invalidBody(where, issue?.message ?? 'invalid'),
      field ? { field } : undefined,
    );
  }
  return parsed.data;
}

/** A route's query string, validated like a body (`400 bad_request`). */
export function readQuery<T extends z.ZodType>(event: H3Event, schema: T): z.infer<T> {
  const parsed = schema.safeParse(Object.fromEntries(event.url.searchParams));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw new ApiError(
      'bad_request',
      refusalMessages.bad_request.invalidQuery(where, issue?.message ?? 'invalid'),
    );
  }
  return parsed.data;
}

const uuid = z.uuid();

/** Whether a value has the shape of our ids (a UUID): anything else names nothing we store. */
export function isIdShaped(value: string): boolean {
  return uuid.safeParse(value).success;
}

/** A route's id parameter; anything that is not an id cannot name a resource, so `404`. */
export function idParam(event: H3Event, name: string, what: NotFoundSubject = 'thread'): string {
  const value = getRouterParam(event, name);
  if (value === undefined || !isIdShaped(value)) throw notFound(what);
  return value as string;
}

const encoder = new TextEncoder();

/** The headers of an AI SDK UI message stream (what `createUIMessageStreamResponse` sends). */
const UI_MESSAGE_STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
} as const;

/**
 * Chunks that arrive within this long of the last write go out together in the next one. Every
 * socket write is a system call, and a reply is hundreds of small chunks; a person cannot see a
 * difference of a few milliseconds between words, and the first text and the end never wait.
 */
export const STREAM_BATCH_MS = 8;

/**
 * A response's headers go out with its first write. A run that has nothing to say yet (its start
 * waits for a database that stopped answering just after the send was accepted) would leave the
 * sender without even a status for as long: past this, a comment line (which SSE readers skip) is
 * written so the accepted send is answered.
 */
export const STREAM_OPENING_MS = 250;

/**
 * A reply's chunks as they come, for the answer that writes them out: every chunk so far, then
 * each new one, then the end (with the error that broke it, if one did).
 */
export interface ReplySource {
  /** Calls `onChunk` for each chunk in order and `onEnd` once; returns the unsubscribe. */
  follow(onChunk: (chunk: UIMessageChunk) => void, onEnd: (error?: unknown) => void): () => void;
}

/**
 * A turn's reply as an AI SDK UI message stream (SSE: `data: <chunk>` events, then `[DONE]`, as
 * `createUIMessageStreamResponse` writes it), with its id in `x-turn-id`. Chunks are batched
 * (`STREAM_BATCH_MS`): one write for what arrives together.
 *
 * The body is a Node stream the server pipes into the socket (`replyBody`), not a web stream: a
 * reply is hundreds of writes, and a web stream costs promise jobs and garbage on each of them
 * (at a thousand replies at once that was a good part of the process's time). With `event`, the
 * headers the app prepared on it (security headers) are taken into the response here: left on the
 * event, h3 would rebuild the response around them and turn the body into a web stream again.
 */
export function turnStreamResponse(
  turnId: string,
  source: ReplySource,
  headers: Record<string, string> = {},
  event?: H3Event,
): Response {
  const all = new Headers({ ...UI_MESSAGE_STREAM_HEADERS, 'x-turn-id': turnId, ...headers });
  if (event) takePreparedHeaders(event, all);
  // srvx's response pipes a Node stream body into the socket as it is (its types name web bodies only).
  return new FastResponse(replyBody(source) as unknown as BodyInit, { headers: all });
}

/** Moves the headers prepared on `event` into `headers`, as h3 would merge them (theirs win). */
function takePreparedHeaders(event: H3Event, headers: Headers): void {
  const prepared = event.res.headers;
  for (const [name, value] of prepared) {
    if (name === 'set-cookie') headers.append(name, value);
    else headers.set(name, value);
  }
  for (const name of [...prepared.keys()]) prepared.delete(name);
}

/**
 * The SSE bytes of a reply, pushed as its chunks come (`follow` calls back synchronously, so a
 * word costs one JSON encoding and, past the batch interval, one push into the socket's pipe).
 * The client going away destroys it, which stops following.
 */
export function replyBody(source: ReplySource): Readable {
  let pending = '';
  // Counted from the start: the reply's opening chunks wait (briefly) for its first text.
  let lastWriteAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let sentText = false;
  let finished = false;
  let stop: (() => void) | undefined;
  const body = new Readable({
    read() {},
    destroy(error, callback) {
      clearTimeout(timer);
      clearTimeout(opening);
      stop?.();
      callback(error);
    },
  });
  let opening: NodeJS.Timeout | undefined = setTimeout(() => {
    opening = undefined;
    if (!body.destroyed && !finished) body.push(': accepted\n\n');
  }, STREAM_OPENING_MS);
  const write = () => {
    clearTimeout(timer);
    timer = undefined;
    clearTimeout(opening);
    opening = undefined;
    if (body.destroyed) return;
    if (pending) body.push(pending);
    pending = '';
    lastWriteAt = performance.now();
    if (finished) body.push(null);
  };
  const fail = (error: unknown) => {
    if (!body.destroyed) body.destroy(error instanceof Error ? error : new Error(String(error)));
  };
  stop = source.follow(
    (chunk) => {
      if (finished || body.destroyed) return;
      try {
        pending += `data: ${JSON.stringify(chunk)}\n\n`;
        // The first words a person waits for go out at once; later ones may wait a few ms.
        const firstText = !sentText && chunk.type === 'text-delta';
        if (firstText) sentText = true;
        const waitMs = STREAM_BATCH_MS - (performance.now() - lastWriteAt);
        if (firstText || waitMs <= 0) write();
        else timer ??= setTimeout(write, waitMs);
      } catch (error) {
        // Never into the run that pushed the chunk: only this answer ends.
        fail(error);
      }
    },
    (error) => {
      if (finished || body.destroyed) return;
      if (error !== undefined) {
        fail(error);
        return;
      }
      pending += 'data: [DONE]\n\n';
      finished = true;
      write();
    },
  );
  if (body.destroyed) stop();
  return body;
}

/** How often an idle event stream sends a comment line, so proxies keep it open. */
const HEARTBEAT_MS = 15_000;

/**
 * A Server-Sent Events response of JSON events. `open` starts the source with a `send` function
 * and returns its cleanup, which runs when the client goes away (`abort`) or cancels the body.
 */
export function eventStreamResponse(
  abort: AbortSignal,
  open: (send: (event: unknown) => void) => () => void,
): Response {
  let cleanup = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    cleanup();
    clearInterval(heartbeat);
  };
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      cleanup = open((event) => {
        if (!abort.aborted) controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
      });
      heartbeat = setInterval(() => controller.enqueue(encoder.encode(': keep-alive\n\n')), HEARTBEAT_MS);
      abort.addEventListener('abort', () => {
        stop();
        try {
          controller.close();
        } catch {
          // Already closed by the client going away.
        }
      });
    },
    cancel: stop,
  });
  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    },
  });
}
