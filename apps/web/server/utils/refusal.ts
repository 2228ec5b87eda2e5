import type { ServerResponse } from 'node:http';
import { type ErrorBody, type ErrorCode, errorTable } from '@chat/contracts';
import type { H3Event } from 'h3';

/**
 * Answers with the contract's JSON refusal (`{ error: { code, message } }`) and the code's status,
 * written straight to the response so it also works halfway through reading a request body.
 * Refusals are never cached: a missing build asset must not stick in a browser for a year.
 */
export function refuse(
  event: H3Event,
  code: ErrorCode,
  options: { message?: string; headers?: Record<string, string> } = {},
): void {
  writeRefusal(event.node.res, code, options);
}

export function writeRefusal(
  res: ServerResponse,
  code: ErrorCode,
  options: { message?: string; headers?: Record<string, string> } = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, message } = errorTable[code];
  const body: ErrorBody = { error: { code, message: options.message ?? message } };
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...options.headers,
  });
  res.end(JSON.stringify(body));
}

/** Drops the browser's connection without an answer (it went away, or its request broke off). */
export function abandon(event: H3Event): void {
  event.node.res.destroy();
  // Tells h3 the response is dealt with, so it does not try to answer a 404 on a dead socket.
  event._handled = true;
}
