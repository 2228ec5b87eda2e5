import { editMessageBody, regenerateReplyBody, switchBranchBody } from '@chat/contracts';
import { getRouterParam, type H3, type H3Event } from 'h3';
import { notFound } from '../platform/errors';
import { idParam, readJson } from '../platform/http';
import { stepTimesOf } from '../platform/serverTiming';
import { authedRoutes } from './route';
import type { ApiServices } from './services';
import { sendResponse } from './turns';

/** Message ids are Mastra's (uuids in practice): letters, digits, `-` and `_`. */
const MESSAGE_ID = /^[\w-]{1,200}$/;

/** A message id parameter; anything that is not one cannot name a message, so `404`. */
export function messageIdParam(event: H3Event): string {
  const value = getRouterParam(event, 'messageId');
  if (!value || !MESSAGE_ID.test(value)) throw notFound('message');
  return value;
}

export function registerBranchRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);
  const { branches, threads } = services;

  // An edit starts a turn like a send, so it counts as one.
  route(
    'post',
    '/api/threads/:id/messages/:messageId/versions',
    async (event, userId) => {
      const threadId = idParam(event, 'id');
      const messageId = messageIdParam(event);
      const body = await readJson(event, editMessageBody);
      return sendResponse(
        event,
        await branches.editMessage(userId, threadId, messageId, body),
        stepTimesOf(event),
      );
    },
    { limit: 'sends', startsTurn: true },
  );

  // Regenerating the latest reply is an edit that keeps the text: it starts a turn too.
  route(
    'post',
    '/api/threads/:id/messages/:messageId/regenerate',
    async (event, userId) => {
      const threadId = idParam(event, 'id');
      const replyId = messageIdParam(event);
      const body = await readJson(event, regenerateReplyBody);
      return sendResponse(
        event,
        await branches.regenerateReply(userId, threadId, replyId, body),
        stepTimesOf(event),
      );
    },
    { limit: 'sends', startsTurn: true },
  );

  route('put', '/api/threads/:id/active-branch', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const body = await readJson(event, switchBranchBody);
    await branches.switchBranch(userId, threadId, body.branchId);
    return await threads.detail(userId, threadId);
  });

  route('delete', '/api/threads/:id/messages/:messageId', async (event, userId) => {
    const threadId = idParam(event, 'id');
    await branches.deleteLatestTurn(userId, threadId, messageIdParam(event));
    return await threads.detail(userId, threadId);
  });
}
