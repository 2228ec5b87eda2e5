import { editQueuedTurnBody, sendTurnBody } from '@chat/contracts';
import type { H3 } from 'h3';
import { eventStreamResponse, idParam, readJson, turnStreamResponse } from '../../platform/http';
import type { ChatServices } from '../context';
import { threadEventStream } from '../threadEvents';
import { toTurn } from '../turns/dto';
import { authedRoute } from './route';

export function registerTurnRoutes(app: H3, services: ChatServices) {
  const route = (
    method: Parameters<typeof authedRoute>[2],
    path: string,
    handler: Parameters<typeof authedRoute>[4],
  ) => authedRoute(app, services, method, path, handler);
  const { turns } = services;

  route('post', '/api/threads/:id/turns', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const body = await readJson(event, sendTurnBody);
    const result = await turns.send(userId, threadId, body);
    if (result.kind === 'streaming') return turnStreamResponse(result.turn.id, result.stream.subscribe());
    return Response.json({ turn: toTurn(result.turn), turnQueue: result.turnQueue }, { status: 202 });
  });

  route('get', '/api/threads/:id/turns/:turnId/stream', async (event, userId) => {
    const turnId = idParam(event, 'turnId', 'Turn');
    const stream = await turns.attach(userId, idParam(event, 'id'), turnId);
    return stream ? turnStreamResponse(turnId, stream) : new Response(null, { status: 204 });
  });

  route('post', '/api/threads/:id/interrupt', async (event, userId) => {
    const turn = await turns.interrupt(userId, idParam(event, 'id'));
    return { turn: turn ? toTurn(turn) : null };
  });

  route('post', '/api/threads/:id/queue/claim', async (event, userId) => {
    const { turn, stream } = await turns.claimHead(userId, idParam(event, 'id'), { handoff: false });
    return turnStreamResponse(turn.id, stream.subscribe());
  });

  route('patch', '/api/threads/:id/queue/:turnId', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const turnId = idParam(event, 'turnId', 'Turn');
    const body = await readJson(event, editQueuedTurnBody);
    const { turn, turnQueue } = await turns.editQueued(userId, threadId, turnId, body);
    return { turn: toTurn(turn), turnQueue };
  });

  route('delete', '/api/threads/:id/queue/:turnId', async (event, userId) => {
    const { turn, turnQueue } = await turns.deleteQueued(
      userId,
      idParam(event, 'id'),
      idParam(event, 'turnId', 'Turn'),
    );
    return { turn: toTurn(turn), turnQueue };
  });

  route('post', '/api/threads/:id/queue/:turnId/send-now', async (event, userId) => {
    const { turn, stream } = await turns.sendNow(
      userId,
      idParam(event, 'id'),
      idParam(event, 'turnId', 'Turn'),
    );
    return turnStreamResponse(turn.id, stream.subscribe());
  });

  route('get', '/api/threads/:id/events', async (event, userId) => {
    const threadId = idParam(event, 'id');
    await services.threads.requireOwned(userId, threadId);
    return eventStreamResponse(threadEventStream(services, threadId, event.req.signal));
  });
}
