import { decideHitlBody } from '@chat/contracts';
import type { H3 } from 'h3';
import { idParam, readJson, turnStreamResponse } from '../platform/http';
import { authedRoutes } from './route';
import type { ApiServices } from './services';

export function registerApprovalRoutes(app: H3, services: ApiServices) {
  const route = authedRoutes(app, services);

  // Approve or deny a tool call; the answer is the turn's continuing reply (SSE).
  route('post', '/api/threads/:id/hitl/:requestId', async (event, userId) => {
    const threadId = idParam(event, 'id');
    const requestId = idParam(event, 'requestId', 'approval');
    const body = await readJson(event, decideHitlBody);
    const { turn, stream } = await services.approvals.decide(userId, threadId, requestId, body.decision, {
      allowForChat: body.allowForChat,
    });
    return turnStreamResponse(turn.id, stream, {}, event);
  });
}
