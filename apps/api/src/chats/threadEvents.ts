import type { ContextState, ThreadEvent } from '@chat/contracts';
import type { Database } from '@chat/db';
import { eventStreamResponse } from '../platform/http';
import type { Logger } from '../platform/logger';
import type { Signals, ThreadSignal } from '../platform/notifications';
import { findBranch } from './branches/repository';
import { feedbackOfMessages } from './feedback/repository';
import { readThreadModel } from './threads/choices';
import { requireOwnedThread } from './threads/repository';
import { listRequests } from './turns/approval/repository';
import type { ContextWindows } from './turns/context/window';
import { toTurn } from './turns/dto';
import { readTurnQueue } from './turns/queue/turnQueue';
import { findTurn } from './turns/repository';
import { settledTurnMessages } from './turns/settledMessages';

export interface ThreadEventsDeps {
  db: Database;
  /** The meter a settle event carries (C2). */
  windows: ContextWindows;
  signals: Signals;
  logger: Logger;
}

/**
 * `GET /api/threads/:id/events`: thread signals from every instance, turned into ThreadEvents with
 * the current queue read from the database (signals carry ids only), and a settled turn's final
 * messages, so tabs apply what changed rather than read the whole detail again. It starts with a
 * snapshot so a tab that connects late is in sync at once.
 */
export class ThreadEvents {
  constructor(private readonly deps: ThreadEventsDeps) {}

  async open(ownerId: string, threadId: string, abort: AbortSignal): Promise<Response> {
    await requireOwnedThread(this.deps.db, threadId, ownerId);
    return eventStreamResponse(abort, (send) => {
      // One event at a time, in signal order, each built from the database as it is then.
      let chain: Promise<void> = Promise.resolve();
      const enqueue = (build: () => Promise<ThreadEvent | null>) => {
        chain = chain
          .then(build)
          .then((event) => {
            if (event) send(event);
          })
          .catch((error: unknown) => this.deps.logger.warn({ err: error, threadId }, 'thread event failed'));
      };
      enqueue(async () => this.queueChanged(threadId));
      return this.deps.signals.subscribe((signal) => {
        if ('threadId' in signal && signal.threadId === threadId)
          enqueue(() => this.toThreadEvent(ownerId, signal));
      });
    });
  }

  private async queueChanged(threadId: string): Promise<ThreadEvent> {
    return { type: 'queue.changed', threadId, turnQueue: await readTurnQueue(this.deps.db, threadId) };
  }

  /** The meter of the settled turn's branch; left out when it cannot be read (a tab reads the detail). */
  private async contextOf(threadId: string, branchId: string): Promise<ContextState | undefined> {
    const [branch, model] = await Promise.all([
      findBranch(this.deps.db, branchId),
      readThreadModel(this.deps.db, threadId),
    ]);
    if (!branch) return undefined;
    // Against the window of the chat's model (M2), as the detail's meter is.
    const windows = this.deps.windows.forModel(model);
    return await windows.state(this.deps.db, branch).catch((error: unknown) => {
      this.deps.logger.warn({ err: error, branchId }, 'could not measure the context window');
      return undefined;
    });
  }

  private async toThreadEvent(ownerId: string, signal: ThreadSignal): Promise<ThreadEvent | null> {
    const { threadId } = signal;
    switch (signal.kind) {
      case 'interrupt':
      case 'steer':
        return null;
      case 'turn.started': {
        const row = await findTurn(this.deps.db, threadId, signal.turnId);
        if (!row) return null;
        return {
          type: signal.kind,
          threadId,
          turn: toTurn(row),
          turnQueue: await readTurnQueue(this.deps.db, threadId),
        };
      }
      case 'turn.settled': {
        const row = await findTurn(this.deps.db, threadId, signal.turnId);
        if (!row) return null;
        const [turnQueue, messages, context] = await Promise.all([
          readTurnQueue(this.deps.db, threadId),
          settledTurnMessages(this.deps.db, row),
          this.contextOf(threadId, row.branchId),
        ]);
        return {
          type: signal.kind,
          threadId,
          turn: toTurn(row),
          turnQueue,
          ...(messages ? { messages } : {}),
          ...(context ? { context } : {}),
        };
      }
      case 'queue.changed':
        return await this.queueChanged(threadId);
      case 'hitl.changed':
        return {
          type: 'hitl.changed',
          threadId,
          hitl: await listRequests(this.deps.db, threadId),
          turnQueue: await readTurnQueue(this.deps.db, threadId),
        };
      case 'feedback.changed': {
        const { messageId } = signal;
        const feedback = await feedbackOfMessages(this.deps.db, ownerId, threadId, [messageId]);
        return { type: signal.kind, threadId, messageId, feedback: feedback.get(messageId) ?? null };
      }
      case 'thread.changed':
      case 'context.changed':
      case 'thread.deleted':
        return { type: signal.kind, threadId };
    }
  }
}
