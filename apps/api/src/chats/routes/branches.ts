import { editMessageBody, switchBranchBody } from '@chat/contracts';
import { getRouterParam, type H3, type H3Event } from 'h3';
import { notFound } from '../../platform/errors';
import { idParam, readJson, turnStreamResponse } from '../../platform/http';
import type { ChatServices } from '../context';
import { toTurn } from '../turns/dto';
import { authedRoute } from './route';

/** Message ids are Mastra's (uuids in practice); anything else cannot name a message. */
function messageIdParam(event: H3Event): string {
  const value = getRouterParam(event, 'messageId');
  if (!value || value.length > 200) throw notFound('Message');
  return value;
}

export function registerBranchRoutes(app: H3, services: ChatServices) {
  const route = (
    method: Parameters<typeof authedRoute>[2],
    path: string,
    handler: Parameters<typeof authedRoute>[4],
  ) => authedRoute(app, services, method, path, handler);
  const { branches } = services;

  route('post', '/api/threads/:id/messages/:messageId/versions', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const messageId = messageIdParam(event);
    const body = await readJson(event, editMessageBody);
    const result = await branches.editMessage(userId, threadId, messageId, body);
    if (result.kind === 'streaming') return turnStreamResponse(result.turn.id, result.stream.subscribe());
    return Response.json({ turn: toTurn(result.turn), turnQueue: result.turnQueue }, { status: 202 });
  });

  route('put', '/api/threads/:id/active-branch', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const body = await readJson(event, switchBranchBody);
    await branches.switchBranch(userId, threadId, body.branchId);
    return await services.threads.detail(userId, threadId);
  });

  route('delete', '/api/threads/:id/messages/:messageId', async (event, userId) => {
    const threadId = idParam(event, 'id');
    await branches.deleteLatestTurn(userId, threadId, messageIdParam(event));
    return await services.threads.detail(userId, threadId);
  });
}
