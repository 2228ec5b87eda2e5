import { type NotFoundSubject, refusalMessages } from '@chat/contracts';
import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { getRouterParam, type H3Event } from 'h3';
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

/** A route's id parameter; anything that is not an id cannot name a resource, so `404`. */
export function idParam(event: H3Event, name: string, what: NotFoundSubject = 'thread'): string {
  const value = getRouterParam(event, name);
  if (!uuid.safeParse(value).success) throw notFound(what);
  return value as string;
}

/** A turn's reply as an AI SDK UI message stream (SSE), with its id in `x-turn-id`. */
export function turnStreamResponse(turnId: string, stream: ReadableStream<UIMessageChunk>): Response {
  return createUIMessageStreamResponse({
    stream,
    headers: { 'x-turn-id': turnId, 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
  });
}

/** How often an idle event stream sends a comment line, so proxies keep it open. */
const HEARTBEAT_MS = 15_000;
const encoder = new TextEncoder();

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
