import {
  editQueuedTurnBody,
  type InterruptAnswer,
  mergeQueuedTurnsBody,
  moveQueuedTurnBody,
  sendNowBody,
  sendTurnBody,
  setQueuePausedBody,
} from '@chat/contracts';
import type { H3, H3Event } from 'h3';
import type { SendResult } from '../chats/turns/accepting/turnAcceptance';
import { idParam, readJson, turnStreamResponse } from '../platform/http';
import { type StepTimes, stepTimesOf } from '../platform/serverTiming';
import { authedRoutes } from './route';
import type { ApiServices } from './services';

/**
 * A send's answer: the reply stream (200), or the accepted turn and the queue (202), with the
 * steps it took in `Server-Timing`.
 */
export function sendResponse(event: H3Event, result: SendResult, times: StepTimes): Response {
  const headers = { 'server-timing': times.header() };
  if (result.kind === 'streaming') return turnStreamResponse(result.turn.id, result.stream, headers, event);
  return Response.json({ turn: result.turn, turnQueue: result.turnQueue }, { status: 202, headers });
}

export function registerTurnRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const { acceptance, queue, claims, interrupts, streams } = services;

  route(
    'post',
    '/api/threads/:id/turns',
    async (event, userId) => {
      const threadId = idParam(event, 'id');
      const body = await readJson(event, sendTurnBody);
      const times = stepTimesOf(event);
      return sendResponse(event, await acceptance.send(userId, threadId, body, times), times);
    },
    { limit: 'sends', startsTurn: true },
  );

  route('get', '/api/threads/:id/turns/:turnId/stream', async (event, userId) => {
    const turnId = idParam(event, 'turnId', 'turn');
    const stream = await streams.attach(userId, idParam(event, 'id'), turnId);
    return stream ? turnStreamResponse(turnId, stream, {}, event) : new Response(null, { status: 204 });
  });

  route(
    'post',
    '/api/threads/:id/interrupt',
    async (event, userId): Promise<InterruptAnswer> => await interrupts.stop(userId, idParam(event, 'id')),
  );

  route('post', '/api/threads/:id/queue/claim', async (event, userId) => {
    const { turn, stream } = await claims.claim(userId, idParam(event, 'id'));
    return turnStreamResponse(turn.id, stream, {}, event);
  });

  route('post', '/api/threads/:id/queue/:turnId/retry', async (event, userId) => {
    const { turn, stream } = await claims.retry(
      userId,
      idParam(event, 'id'),
      idParam(event, 'turnId', 'turn'),
    );
    return turnStreamResponse(turn.id, stream, {}, event);
  });

  route('put', '/api/threads/:id/queue/paused', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const body = await readJson(event, setQueuePausedBody);
    return await queue.setPaused(userId, threadId, body.paused);
  });

  route('patch', '/api/threads/:id/queue/:turnId', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const turnId = idParam(event, 'turnId', 'turn');
    const body = await readJson(event, editQueuedTurnBody);
    return await queue.edit(userId, threadId, turnId, body);
  });

  route('delete', '/api/threads/:id/queue/:turnId', (event, userId) =>
    queue.remove(userId, idParam(event, 'id'), idParam(event, 'turnId', 'turn')),
  );

  route('post', '/api/threads/:id/queue/:turnId/send-now', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const turnId = idParam(event, 'turnId', 'turn');
    const body = await readJson(event, sendNowBody);
    const { turn, stream } = await interrupts.sendNow(userId, threadId, turnId, body);
    return turnStreamResponse(turn.id, stream, {}, event);
  });

  route('post', '/api/threads/:id/queue/:turnId/move', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const turnId = idParam(event, 'turnId', 'turn');
    const place = await readJson(event, moveQueuedTurnBody);
    return await queue.move(userId, threadId, turnId, place);
  });

  route('post', '/api/threads/:id/queue/merge', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const body = await readJson(event, mergeQueuedTurnsBody);
    return await queue.merge(userId, threadId, body);
  });
}
